"""The result file: its schema with load/dump, and merging several into one."""
