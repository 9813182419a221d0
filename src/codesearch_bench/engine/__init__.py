"""Engines: specs, templating, processes and sessions -- how a tool is driven."""
