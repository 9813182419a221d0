"""Before any engine runs: every spec loaded and checked, every corpus planned, and the
problems found said all at once.

A broken spec, a missing program or a corpus that cannot be set up becomes a
Failure here, not a crash an hour in; without `--keep-going` they stop the run
together, before the first engine starts. A query set with problems (a
duplicate id would let one gold overwrite another) stops it whatever the flags.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from .. import workdir
from ..corpus.config import Corpus, load_corpora, select
from ..engine.driver import missing_executable
from ..engine.spec import LoadedSpec, load_spec
from ..errors import STAGE_ERRORS, BenchError, CorpusError, QueryError, SpecError, UsageError
from ..gold.needles.track import NAMED
from ..gold.queries import lint
from ..gold.questions import questions_of
from ..results.schema import Failure
from .options import CompareOptions, Events
from .plan import QUESTIONS, EmptyTrack, Plan, prepare


def load_specs(paths: list[Path], failures: list[Failure]) -> list[LoadedSpec]:
    """Validate every spec up front; a broken one becomes a failure, not a crash.

    `defaults` and a .txt list of specs stand for the specs they name; a spec file named
    twice (in the defaults and by itself) is run once.
    """
    specs: list[LoadedSpec] = []
    seen: dict[str, Path] = {}
    for path in _named(paths, failures):
        try:
            loaded = load_spec(workdir.find_spec(path))
        except SpecError as exc:
            failures.append(Failure(engine=path.stem, corpus="*", stage="spec",
                                    message=str(exc)))
            continue
        if seen.get(loaded.name) == loaded.file:
            continue
        if loaded.name in seen:
            raise UsageError(f"engines {seen[loaded.name]} and {loaded.file} share the name "
                             f"{loaded.name!r}; the name keys the state directory, so each "
                             "must be unique")
        seen[loaded.name] = loaded.file
        if (missing := missing_executable(loaded)) is not None:
            # Said now, not when the engine's turn comes after the others have run.
            failures.append(Failure(engine=loaded.name, corpus="*", stage="program",
                                    message=missing))
            continue
        specs.append(loaded)
    return specs


def _named(paths: list[Path], failures: list[Failure]) -> list[Path]:
    """Every spec the --engine values name, lists opened; a list that cannot be read is a
    failure of its own."""
    out: list[Path] = []
    for given in paths:
        try:
            out.extend(workdir.engine_list(Path(given)))
        except SpecError as exc:
            failures.append(Failure(engine=Path(given).stem, corpus="*", stage="spec",
                                    message=str(exc)))
    return out


def plan_corpora(opts: CompareOptions, events: Events, failures: list[Failure],
                 specs: list[LoadedSpec]) -> list[Plan]:
    """Every selected corpus and track set up and planned; one that cannot be is a
    setup failure of every engine on it."""
    # A corpora file or a --corpus list that cannot be read stops the run: nothing to run on.
    selected = select(load_corpora(opts.corpora_file), opts.corpus)
    plans = []
    for corpus in selected:
        for track in opts.tracks:
            unit = corpus.name if track == QUESTIONS else f"{corpus.name}:{track}"
            if track == QUESTIONS and len(opts.tracks) > 1 and (note := _needles_only(corpus)):
                events.stage(f"{corpus.name}: {note}")
                continue
            try:
                plans.append(prepare(corpus, opts.corpora_root, limit=opts.limit,
                                     split=opts.split, ids=opts.queries, track=track,
                                     stage=events.stage, selection=opts.selection))
            except EmptyTrack as exc:
                if len(opts.tracks) == 1:
                    for name in [s.name for s in specs] or ["*"]:
                        failures.append(Failure(engine=name, corpus=unit, stage="setup",
                                                message=str(exc)))
                else:  # asked for every track: a corpus without this one runs the others
                    events.stage(f"{unit}: skipped, {exc.message}")
            except BenchError as exc:
                for name in [s.name for s in specs] or ["*"]:
                    failures.append(Failure(engine=name, corpus=unit, stage="setup",
                                            message=str(exc)))
    # The needles-named breakout holds the gold's name words by construction: not a leak there.
    problems = [f"{p.unit}: {problem}" for p in plans
                for problem in lint(p.query_set, names=p.track != NAMED)]
    if problems:
        # A duplicate id would let one gold overwrite another: no engine runs on such a set.
        raise QueryError("query sets with problems, so nothing was run:\n  "
                         + "\n  ".join(problems[:20])
                         + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""),
                         hint=f"run `{shlex.join(['bench', 'validate', *opts.selection])}` "
                         "and fix the query set")
    return plans


def _needles_only(corpus: Corpus) -> str | None:
    """What to say of a corpus with no hand-written questions, whose needle track is asked
    for as well: it is run on that alone. None when it has questions (or a query set that
    cannot be read, which `prepare` reports)."""
    try:
        questions = questions_of(corpus)
    except BenchError:
        return None
    if questions.query_set is not None:
        return None
    return f"no hand-written questions ({questions.none_because}): run on its needle track only"


def stop_before_running(failures: list[Failure]) -> None:
    """Every broken spec and corpus at once, before any engine has run for minutes."""
    seen: list[str] = []
    for f in failures:
        line = f"{f.corpus if f.stage == 'setup' else f.engine}: {f.message}"
        if line not in seen:
            seen.append(line)
    # The gravest problem names the exit code: a missing program (4), a corpus (3), a spec (2).
    error = max((STAGE_ERRORS.get(f.stage, CorpusError) for f in failures),
                key=lambda c: c.exit_code)
    # One problem a line; a problem's own further lines (the spec's other fields, its
    # hint) indented under it, not level with the next problem.
    raise error(f"{len(seen)} problem(s) found before any engine ran:\n  "
                + "\n  ".join(line.replace("\n", "\n    ") for line in seen[:20]),
                hint="fix them, or pass --keep-going to run what is valid")
