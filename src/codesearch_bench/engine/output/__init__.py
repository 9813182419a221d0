"""An engine's output read into hits by the parse spec: readers, records, fields."""
