"""Templates: every variable built in one place, rendered in a sandbox under a budget."""
