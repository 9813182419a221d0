"""`bench import`: a public benchmark's files -> a suite folder `bench compare --suite` runs."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from ..corpus.sources.gitstore import human
from ..datasets import IMPORTERS, fitting, hub
from ..datasets.base import ImportOptions
from ..datasets.files import safe_name
from ..datasets.write import write
from ..errors import UsageError
from ..render.ui import UI
from ..workdir import Where


def run(args: argparse.Namespace, ui: UI) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: give a number of queries >= 1")
    importer = IMPORTERS[args.dataset]
    if args.name is not None:
        safe_name(args.name)  # it names files in --out: refused before anything is read
    opts = ImportOptions(source=args.source or Path(), name=args.name, split=args.split,
                   extension=args.ext.lstrip("."), limit=args.limit, license=args.license,
                   languages=[x.strip() for x in args.language.split(",")
                              if x.strip()] if args.language else None, repos=args.repos)
    if args.source is None:  # the pinned revision, from the Hugging Face hub
        suite = hub.load(importer, opts, variant=args.variant, ref=args.hub)
    elif args.variant is not None or args.hub is not None:
        raise UsageError("--variant and --hub choose what to load from the Hugging Face hub; "
                         "with --from, the file you pass is the dataset",
                         hint="drop --from to load from the hub, or drop --variant/--hub")
    else:
        suite = importer.load(opts)
    room = None
    if args.max_tasks is not None:
        suite, room = fitting.fit(
            suite, max_tasks=fitting.parse_max_tasks(args.max_tasks),
            root=Where.of(args).corpora_root,
            task_bytes=fitting.parse_bytes(args.task_bytes) if args.task_bytes else None)
    out = args.out or Path("suites") / (suite.corpora[0].name if len(suite.corpora) == 1
                                        else suite.dataset)
    written = write(suite, out)  # read back as a corpora file before it is moved into place
    say = ui.out.print
    for corpus in suite.corpora:
        say(f"{corpus.name}: {len(corpus.files)} files, {len(corpus.queries)} queries",
            markup=False, highlight=False)
    for reason, count in sorted(suite.dropped.items()):
        if count:
            first = suite.first_at.get(reason)
            say(f"  dropped {count}: {reason}" + (f" (first at {first})" if first else ""),
                markup=False, highlight=False)
    if room is not None:
        say(f"disk: {human(room.free)} free on {room.where}, {human(room.margin)} kept as a "
            f"margin; the {len(suite.corpora)} tasks kept need about {human(room.needed)}"
            + (f", {room.dropped} left out" if room.dropped else ""),
            markup=False, highlight=False)
    say(f"wrote {', '.join(str(p) for p in written)}", markup=False, highlight=False)
    for line in next_steps(out, args.corpora_root):
        say(line, markup=False, highlight=False, soft_wrap=True)
    return 0


def next_steps(out: Path, corpora_root: Path | None) -> list[str]:
    """The commands that set the suite up, check it and run it, each as it runs when pasted:
    every one names the suite (a corpus of it is in no other corpora file) and the corpora
    root the disk estimate was made for."""
    flags = ["--suite", str(out), *(["--corpora-root", str(corpora_root)] if corpora_root
                                   else [])]
    return [f"{label}: {shlex.join(['bench', command, *flags])}"
            for label, command in (("set it up", "setup"), ("check it", "validate"),
                                   ("run it", "compare"))]
