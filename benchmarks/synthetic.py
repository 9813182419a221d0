"""The synthetic corpora benchmarks/scaling.py measures on: deterministic Python trees of N
files (a few small documented functions each, ~100 files per folder, two levels deep) and
query sets whose gold is a (path, function) spread over the tree by a seeded draw.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

FILES_PER_FOLDER = 100
FOLDERS_PER_PARENT = 100

ADJECTIVES = ["rounded", "pending", "weighted", "cached", "nightly", "partial", "signed",
              "stale", "merged", "sorted", "scaled", "checked", "frozen", "local", "remote",
              "queued", "padded", "hashed", "sparse", "dense"]
NOUNS = ["balance", "ledger", "invoice", "snapshot", "schedule", "manifest", "histogram",
         "quota", "payload", "session", "checksum", "budget", "forecast", "report",
         "inventory", "catalog", "timeline", "register", "archive", "digest"]
VERBS = ["Compute", "Collect", "Summarize", "Normalize", "Estimate", "Assemble", "Reconcile",
         "Aggregate", "Validate", "Project"]


def rel_path(i: int) -> str:
    """File i of a tree: pkg/dAA/dBB/mod_i.py, ~100 files per folder."""
    folder = i // FILES_PER_FOLDER
    return (f"pkg/d{folder // FOLDERS_PER_PARENT:03d}/d{folder % FOLDERS_PER_PARENT:02d}/"
            f"mod_{i:06d}.py")


def func_name(i: int, j: int) -> str:
    return f"handle_{i}_{j}"


def _phrase(i: int, j: int) -> tuple[str, str, str]:
    h = (i * 7919 + j * 104729) % 8000
    return (VERBS[h % len(VERBS)], ADJECTIVES[(h // 10) % len(ADJECTIVES)],
            NOUNS[(h // 200) % len(NOUNS)])


def file_text(i: int, funcs: int) -> str:
    parts = [f'"""Helpers of module {i}: small documented functions for the scaling run."""\n']
    for j in range(funcs):
        verb, adj, noun = _phrase(i, j)
        parts.append(
            f"\n\ndef {func_name(i, j)}(value, factor={j + 1}):\n"
            f'    """{verb} the {adj} {noun} of record {i} for slot {j} of the batch.\n\n'
            f"    The value is scaled by the factor and offset by the record number.\n"
            f'    """\n'
            f"    total = value * factor + {i}\n"
            f"    return total - {j}\n")
    return "".join(parts)


def make_tree(root: Path, n_files: int, funcs: int) -> None:
    for i in range(n_files):
        path = root / rel_path(i)
        if i % FILES_PER_FOLDER == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file_text(i, funcs))


def make_queries(path: Path, n_files: int, funcs: int, n_queries: int, seed: int = 0) -> None:
    """Q queries, each gold one (file, function) drawn by a seeded generator over the tree."""
    rng = random.Random(f"{seed}:{n_files}:{n_queries}")
    with path.open("w") as fh:
        for k in range(n_queries):
            i, j = rng.randrange(n_files), rng.randrange(funcs)
            verb, adj, noun = _phrase(i, j)
            text = (f"where is the {adj} {noun} of record {i} in slot {j} "
                    f"{verb.lower()}d (question {k})")
            fh.write(json.dumps({"id": f"q{k:05d}", "query": text,
                                 "gold": [{"path": rel_path(i), "symbol": func_name(i, j)}]})
                     + "\n")
