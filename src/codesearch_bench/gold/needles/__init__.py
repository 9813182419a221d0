"""The needle track: queries from the code's own doc comments, searched in a doc-blanked tree."""
