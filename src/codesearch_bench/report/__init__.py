"""Everything that prints: rich tables, progress, Markdown and JSON views.

Only this package and cli.py touch rich; commands return data.
"""

from __future__ import annotations

from .corpora import download_progress, render_setup, render_validate
from .probe import render_probe

__all__ = ["download_progress", "render_probe", "render_setup", "render_validate"]
