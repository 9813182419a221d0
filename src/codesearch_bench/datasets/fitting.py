"""`bench import --max-tasks N|auto`: at most N tasks, and only as many as the disk holds.

The first N tasks in the dataset's order are kept (`auto`: all of them), then
the tasks of one repository are put next to each other, in the order each
repository first appears, so `bench setup` fills each repository's shared
object store once and then reuses it. Then the disk decides, with a deliberately
simple estimate:

- a git task's tree is the largest tree a commit of the same repository wrote
  under the corpora root (the store's sidecar, gitstore.known()), else
  `--task-bytes` (default 200 MiB). The checkout and the candidate tree share
  inodes (hard links), so a task costs one tree;
- a repository without a store yet pays one tree for it with its first task (a
  depth-1 pack is the compressed tree, normally well under it), and each later
  commit a tenth of a tree for the objects it adds;
- a task with files of its own costs twice their bytes (its archive in the
  suite folder, its tree once set up).

The room is the free space (shutil.disk_usage) on the corpora root's file
system, less a margin of max(1 GiB, 5% of that file system). Tasks are taken in
order while they fit; each that does not is dropped and counted under one
reason, like every other task an importer drops.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ..corpus.sources import gitstore
from ..errors import UsageError
from .base import ImportedCorpus, Suite

DEFAULT_TASK_BYTES = 200 << 20
MIN_MARGIN = 1 << 30
MARGIN_SHARE = 0.05
FETCH_SHARE = 0.1  # a later commit's objects, as a share of its tree
DISK_REASON = "task left out for disk space (bench import --max-tasks)"
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_bytes(text: str) -> int:
    """`500000`, `200M`, `1.5G`, `64KiB` -> bytes (binary units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not m:
        raise UsageError(f"--task-bytes {text!r}: give a size such as 200M, 1.5G or 500000")
    value = int(float(m.group(1)) * _UNITS[m.group(2)])
    if value < 1:
        raise UsageError(f"--task-bytes {text!r}: a task needs at least one byte")
    return value


def parse_max_tasks(text: str) -> int | None:
    """A positive whole number, or `auto` (None): as many as fit."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"--max-tasks {text!r}: give a number of tasks >= 1, or auto")
    return value


@dataclass(frozen=True)
class Room:
    """What the disk check saw, for the report."""

    where: Path
    free: int
    margin: int
    needed: int  # the estimate for the kept tasks
    dropped: int  # tasks left out for disk space


def _existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _grouped(corpora: list[ImportedCorpus]) -> list[ImportedCorpus]:
    first: dict[str, int] = {}
    for i, c in enumerate(corpora):
        first.setdefault(c.git[0] if c.git else f"#{i}", i)
    return [c for _, c in sorted(
        ((first[c.git[0] if c.git else f"#{i}"], i), c) for i, c in enumerate(corpora))]


def fit(suite: Suite, *, max_tasks: int | None, root: Path,
        task_bytes: int | None = None) -> tuple[Suite, Room]:
    """The suite cut to at most max_tasks (None: no cap) and to the disk under root."""
    dropped: Counter[str] = Counter(suite.dropped)
    corpora = list(suite.corpora)
    if max_tasks is not None and len(corpora) > max_tasks:
        dropped[f"task over --max-tasks {max_tasks}"] += len(corpora) - max_tasks
        corpora = corpora[:max_tasks]
    corpora = _grouped(corpora)
    where = _existing(root)
    usage = shutil.disk_usage(where)
    margin = max(MIN_MARGIN, int(usage.total * MARGIN_SHARE))
    room = usage.free - margin
    stores = gitstore.known(root) if root.is_dir() else {}
    default = task_bytes or DEFAULT_TASK_BYTES
    needed, kept, left_out = 0, [], 0
    seen: set[str] = set()
    for c in corpora:
        if c.git is None:
            cost = 2 * sum(len(b) for b in c.files.values())
        else:
            url, commit = c.git
            store = stores.get(url)
            tree = max(store.trees.values(), default=default) if store else default
            if store is None and url not in seen:
                cost = 2 * tree  # the tree and a new store
            elif store is not None and commit in store.trees:
                cost = tree  # its objects are in the store already
            else:
                cost = tree + int(tree * FETCH_SHARE)
        if needed + cost > room:
            left_out += 1
            continue
        needed += cost
        kept.append(c)
        if c.git is not None:
            seen.add(c.git[0])
    if left_out:
        dropped[DISK_REASON] += left_out
    if not kept:
        raise UsageError(
            f"no task fits on {where}: {gitstore.human(usage.free)} free, a margin of "
            f"{gitstore.human(margin)} kept, about {gitstore.human(default)} per task",
            hint="free space there, set the corpora up elsewhere (--corpora-root or "
            "$BENCH_CORPORA), or give a smaller --task-bytes when the trees are small")
    provenance = dict(suite.provenance)
    provenance["dropped"] = dict(sorted(dropped.items()))
    for key in ("tasks_kept", "rows_kept"):
        if key in provenance:
            provenance[key] = len(kept)
    provenance["max_tasks"] = "auto" if max_tasks is None else max_tasks
    return (replace(suite, corpora=kept, provenance=provenance, kept=len(kept),
                    dropped=dropped),
            Room(where, usage.free, margin, needed, left_out))
