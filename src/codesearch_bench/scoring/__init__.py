"""Scoring: normalize, collapse and grade answers; metrics, statistics, tokens and rows."""
