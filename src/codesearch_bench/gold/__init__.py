"""Gold: query sets, and the line spans their gold symbols resolve to in a tree."""
