"""What a fix changed, read from its unified diff: the gold of localization datasets.

A file is in the gold when its old side is `--- a/<path>` (it exists before
the fix, so in the pinned tree); a file the fix creates (`--- /dev/null`) is
not, nor is a path that would leave the tree (counted); test files are told
apart by `is_test_path` (PROTOCOL.md states it).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

from .files import UNSAFE_PATH, safe_path

_OLD = re.compile(r"^--- (?:a/(?P<path>.+?)|/dev/null)\s*$")
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__"})


def is_test_path(path: str) -> bool:
    """A test file: under a test folder, or named test_*, *_test.*, *_tests.*, conftest.py."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    stem = name.rsplit(".", 1)[0]
    return (any(p.lower() in _TEST_DIRS for p in parts[:-1]) or stem.startswith("test_")
            or stem.endswith(("_test", "_tests")) or name == "conftest.py")


def changed_files(patch: str) -> tuple[list[str], list[str]]:
    """(files the diff changes that exist before it, files it creates)."""
    existing: list[str] = []
    created: list[str] = []
    lines = patch.splitlines()
    for i, line in enumerate(lines):
        match = _OLD.match(line)
        if match is None:
            continue
        if match.group("path") is None:
            after = lines[i + 1] if i + 1 < len(lines) else ""
            created.append(after.removeprefix("+++ b/").strip())
        elif match.group("path") not in existing:
            existing.append(match.group("path"))
    return existing, created


def gold_files(patch: str, dropped: Counter[str]) -> list[str]:
    """The fix's gold: files it changes that exist before it, tests left out (both counted)."""
    existing, created = changed_files(patch)
    unsafe = [p for p in existing if not safe_path(p)]
    dropped[UNSAFE_PATH] += len(unsafe)
    existing = [p for p in existing if p not in unsafe]
    dropped["file created by the fix (not in the pinned tree)"] += len(created)
    tests = [p for p in existing if is_test_path(p)]
    dropped["test file changed by the fix"] += len(tests)
    return [p for p in existing if p not in tests]
