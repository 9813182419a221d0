"""`python -m codesearch_bench`: the same as the `bench` command."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
