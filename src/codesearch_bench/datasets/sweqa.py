"""SWE-QA-Pro and SWE-QA: a question about a repository -> the files its reference answer cites.

SWE-QA-Pro rows carry `repo` (owner/name), `commit_id`, `cluster`, `qa_type`,
`question` and `answer` (its `data/test.jsonl`). SWE-QA ships one JSON-lines
file per repository (`Benchmark/<name>.jsonl`) whose rows hold only
`question` and `answer`: the repository is the file's name and its commit
comes from the pin list beside it (`repo_commit.txt`, `<url> <commit>` a
line; SWE-QA-Pro's `repos.txt` has the same form). Each (repository, commit)
becomes one corpus, a git pin; each row one query: the question is the query
text, `qa_type` a tag, and the gold the files the answer cites, resolved
against the pinned tree read from a local clone (`--repos DIR`) with git
itself. A citation is resolved exactly, from a checkout path or URL, or by a
unique suffix (`Tree.resolve`); an ambiguous one is not. A row left with no
resolved file is dropped, and every count is in the provenance.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.languages import language_for
from ..errors import UsageError
from ..gold.queries import GoldRef, Query
from .base import ImportedCorpus, Importer, ImportOptions, Suite
from .files import Ids, Rows, decode, digest, read_bytes, require
from .swebench import rows_of

PIN_LISTS = ("repo_commit.txt", "repos.txt")
_HEX = re.compile(r"[0-9a-f]{7,40}")
_RUN = re.compile(r"[\w.+~/-]+")  # what a path citation is made of; anything else ends it
_URL_REF = re.compile(r"/(?:blob|tree|raw)/[^/]+/(.+)$")
_OWNER_NAME = re.compile(r"[\w.-]+/[\w.-]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

EXACT = "citation naming a tree file exactly"
CHECKOUT = "citation read from an absolute path or URL into the repository"
SUFFIX = "citation resolved by its unique suffix"
OWN = "ambiguous suffix naming a file the answer already cites"
AMBIGUOUS = "citation with an ambiguous suffix (not resolved)"
MISSING = "citation naming no file in the pinned tree"


@dataclass(frozen=True)
class Tree:
    """The regular files of one commit, as `git ls-tree` lists them."""

    commit: str
    files: frozenset[str]
    by_suffix: dict[str, list[str]] = field(default_factory=dict)  # trailing parts -> files
    extensions: frozenset[str] = frozenset()

    @classmethod
    def of(cls, commit: str, paths: list[str]) -> Tree:
        by_suffix: dict[str, list[str]] = {}
        extensions: set[str] = set()
        for path in sorted(set(paths)):
            parts = path.split("/")
            for i in range(1, len(parts)):
                by_suffix.setdefault("/".join(parts[i:]), []).append(path)
            extension = _extension(parts[-1])
            if extension:
                extensions.add(extension)
        return cls(commit, frozenset(paths), by_suffix, frozenset(extensions))

    def resolve(self, cited: str, repo: str) -> tuple[str, list[str]]:
        """How a normalized citation resolves: (EXACT | CHECKOUT | SUFFIX, [path]),
        (AMBIGUOUS, the files it could be) or (MISSING, [])."""
        if cited in self.files:
            return EXACT, [cited]
        rest = _in_checkout(cited, repo)
        if rest is not None and rest in self.files:
            return CHECKOUT, [rest]
        matches = self.by_suffix.get(cited.lstrip("~/"), [])
        if len(matches) == 1:
            return SUFFIX, matches
        return (AMBIGUOUS, matches) if matches else (MISSING, [])


def _extension(name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    return ext if dot and stem and ext[:1].isalpha() and ext.isalnum() else ""


def _in_checkout(cited: str, repo: str) -> str | None:
    """A URL's part inside the repository (after a GitHub-style `/blob/<ref>/`, or
    `tree`, `raw`), or an absolute path's (after its first folder named like it)."""
    if (url := _URL_REF.search(cited)) is not None:
        return url.group(1)
    if not cited.startswith(("/", "~")):
        return None
    parts = cited.lstrip("~/").split("/")
    lowered = [p.lower() for p in parts[:-1]]
    if repo.lower() in lowered:
        return "/".join(parts[lowered.index(repo.lower()) + 1:])
    return None


def citations(answer: str, tree: Tree) -> list[str]:
    """The answer's path-like tokens that may name a file, normalized, in order, once each.

    A token is a run of word characters, `.`, `-`, `+`, `~` and `/`: backticks,
    quotes, brackets and a line suffix (`:12`, `:12-30`, `#L12`, `: line 12`)
    end it. Trailing full stops (and `_`, `-`) are stripped, a token ending in
    `/` names a folder and is skipped, and leading `./` and `../` are removed.
    It is a citation when its last part has an extension some file of the tree
    has, or when it contains `/` and names a tree file exactly.
    """
    out: list[str] = []
    for match in _RUN.finditer(answer):
        token = match.group(0).rstrip("._-")
        if not token or token.endswith("/"):
            continue
        while token.startswith(("./", "../")):
            token = token.split("/", 1)[1]
        if not token.strip("~/"):
            continue
        name = token.rsplit("/", 1)[-1]
        if (_extension(name) in tree.extensions or ("/" in token and token in tree.files)) \
                and token not in out:
            out.append(token)
    return out


def gold_of(cited: list[str], tree: Tree, repo: str, counts: Counter[str]) -> list[str]:
    """The files an answer's citations name, in the order first cited; each citation
    counted by how it resolved. An ambiguous suffix that matches exactly one file the
    answer resolved otherwise is that file (it adds no gold); any other is not resolved."""
    gold: list[str] = []
    ambiguous: list[list[str]] = []
    for one in cited:
        how, paths = tree.resolve(one, repo)
        if how == AMBIGUOUS:
            ambiguous.append(paths)
            continue
        counts[how] += 1
        if how != MISSING and paths[0] not in gold:
            gold.append(paths[0])
    for paths in ambiguous:
        counts[OWN if sum(p in gold for p in paths) == 1 else AMBIGUOUS] += 1
    return gold


def _git(where: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    # The ceiling keeps git from taking a folder that is not a clone for the repository
    # around it (a checkout folder inside the user's own project).
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CEILING_DIRECTORIES=str(where.parent))
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, env=env,
                          check=False)


def read_tree(clone: Path, commit: str) -> Tree | None:
    """The pinned tree from a local clone (worktree or bare), or None when the clone
    does not hold that commit. Symlinks and submodules are not files of the tree."""
    if shutil.which("git") is None:
        raise UsageError("git is not installed: citations are resolved against the pinned "
                         "tree, read from the local clones with git")
    probe = _git(clone, "rev-parse", "--git-dir")
    if probe.returncode != 0:
        said = probe.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"{clone}: not a git clone git can read ({said[-1] if said else ''})",
                         hint="--repos holds one git clone per repository, with the commits "
                         "the rows name (a plain copy of the files cannot be checked)")
    proc = _git(clone, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if proc.returncode != 0:
        return None
    full = proc.stdout.decode().strip()
    listing = _git(clone, "ls-tree", "-r", "-z", "--full-tree", full)
    if listing.returncode != 0:
        raise UsageError(f"{clone}: git ls-tree {full} failed: "
                         f"{listing.stderr.decode(errors='replace').strip()[-300:]}")
    paths: list[str] = []
    for entry in listing.stdout.split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        if meta.split(b" ", 1)[0] not in (b"100644", b"100755"):
            continue
        try:
            paths.append(raw.decode())
        except UnicodeDecodeError:
            continue  # no UTF-8 answer can cite it
    return Tree.of(full, paths)


@dataclass(frozen=True)
class _Source:
    files: list[Path]
    pins: Path | None


def _source(path: Path) -> _Source:
    if path.is_dir():
        folder = next((f for f in (path, path / "Benchmark", path / "data")
                       if f.is_dir() and any(f.glob("*.jsonl"))), path)
        files = sorted(folder.glob("*.jsonl"))
        if not files:
            raise UsageError(f"{path}: no .jsonl file here or in Benchmark/ or data/",
                             hint="pass SWE-QA-Pro's test.jsonl, one of SWE-QA's "
                             "Benchmark/<name>.jsonl, or the folder holding them")
    elif path.is_file():
        folder, files = path.parent, [path]
    else:
        raise UsageError(f"{path}: no such file", hint="pass SWE-QA-Pro's data/test.jsonl "
                         "or SWE-QA's Benchmark/ folder with --from")
    pins = next((f / n for f in (folder, folder.parent) for n in PIN_LISTS
                 if (f / n).is_file()), None)
    return _Source(files, pins)


def _pins(path: Path | None) -> dict[str, tuple[str, str]]:
    """The pin list: a repository's folder name (lower case) -> (url, commit)."""
    pins: dict[str, tuple[str, str]] = {}
    if path is None:
        return pins
    for line in decode(read_bytes(path), path).splitlines():
        fields = line.split()
        if len(fields) >= 2 and not fields[0].startswith("#"):
            name = fields[0].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
            pins[name.lower()] = (fields[0].removesuffix(".git"), fields[1].lower())
    return pins


def _clone(root: Path, repo: str) -> Path | None:
    name = repo.rsplit("/", 1)[-1]
    if name in ("", ".", ".."):
        return None
    places = [root / name, root / f"{name}.git"]
    if _OWNER_NAME.fullmatch(repo) and ".." not in repo.split("/"):
        places.insert(0, root / repo)
    return next((p for p in places if p.is_dir()), None)


def _tag(value: Any) -> str:
    """`qa_type` as a tag: the string, or a {class_name, ...} object's class name."""
    if isinstance(value, dict):
        value = value.get("class_name") or value.get("name") or ""
    return "-".join(str(value or "").lower().split())


def load(opts: ImportOptions) -> Suite:
    if opts.repos is None or not opts.repos.is_dir():
        raise UsageError(f"--repos {opts.repos or '(not given)'}: sweqa resolves the answers' "
                         "citations against each pinned tree and needs a folder of local "
                         "clones, one per repository (DIR/<name> or DIR/<owner>/<name>)",
                         hint="clone each repository (the datasets' clone_repos.sh does) and "
                         "pass their folder with --repos")
    source = _source(opts.source)
    pins = _pins(source.pins)
    reader = Rows()
    rows = [(f, row) for f in source.files for row in rows_of(f, reader)]
    pro = any("commit_id" in row or "qa_type" in row for _, row in rows)
    dataset, prefix = ("swe-qa-pro", "sweqa-pro") if pro else ("swe-qa", "sweqa")
    dropped = reader.dropped
    counts: Counter[str] = Counter()
    trees: dict[tuple[Path, str], Tree | None] = {}
    groups: dict[tuple[str, str], list[Query]] = {}  # (url, commit) -> its queries
    labels: dict[tuple[str, str], str] = {}
    seen: Counter[tuple[str, str]] = Counter()
    kept = 0
    for n, (file, row) in enumerate(rows, 1):
        if opts.limit and kept >= opts.limit:
            break
        require(row, ("question", "answer"), f"{file}: row {n}", "SWE-QA", empty_ok=True)
        repo = str(row.get("repo") or "").strip().strip("/").removesuffix(".git") or file.stem
        name = repo.rsplit("/", 1)[-1]
        pin = pins.get(name.lower())
        commit = str(row.get("commit_id") or row.get("commit") or (pin[1] if pin else ""))
        commit = commit.strip().lower()
        seen[(repo, commit)] += 1
        question = str(row["question"]).strip()
        if not question or not str(row["answer"]).strip():
            dropped["row with an empty question or answer"] += 1
            continue
        if not _HEX.fullmatch(commit):
            dropped["row with no commit id (none in the row or the pin list)"] += 1
            continue
        url = f"https://github.com/{repo}" if _OWNER_NAME.fullmatch(repo) else \
            pin[0] if pin else None
        if url is None:
            dropped["row whose repository has no URL (not owner/name, not in the pin list)"] \
                += 1
            continue
        clone = _clone(opts.repos, repo)
        if clone is None:
            dropped["row whose repository has no clone under --repos"] += 1
            continue
        if (clone, commit) not in trees:
            trees[(clone, commit)] = read_tree(clone, commit)
        tree = trees[(clone, commit)]
        if tree is None:
            dropped["row whose commit is not in its clone"] += 1
            continue
        cited = citations(str(row["answer"]), tree)
        if not cited:
            dropped["row whose answer cites no file"] += 1
            continue
        gold = gold_of(cited, tree, name, counts)
        if not gold:
            dropped["row whose citations resolve to no file (ambiguous or not in the tree)"] \
                += 1
            continue
        key = (url, tree.commit)
        labels.setdefault(key, repo)
        tags = [dataset, *([t] if (t := _tag(row.get("qa_type"))) else [])]
        groups.setdefault(key, []).append(Query(
            id=f"{seen[(repo, commit)]:03d}", query=question,
            gold=[GoldRef(path=p) for p in gold], tags=tags))
        kept += 1
    dropped.update({k: v for k, v in counts.items() if k in (AMBIGUOUS, MISSING)})
    if not groups:
        raise UsageError(f"{opts.source}: no row has a citation that resolves in its pinned "
                         f"tree ({reader.summary()})")
    names = Counter(_UNSAFE.sub("-", labels[k].rsplit("/", 1)[-1]).strip("-").lower()
                    for k in groups)
    corpora: list[ImportedCorpus] = []
    ids = Ids()
    for key, queries in groups.items():
        label = _UNSAFE.sub("-", labels[key].rsplit("/", 1)[-1]).strip("-").lower()
        cname = ids.claim("\0".join(key), f"{prefix}-{label}"[:55] + (
            f"-{key[1][:8]}" if names[label] > 1 else ""))
        assert cname is not None  # groups' keys are distinct
        exts = {language_for(g.path) for q in queries for g in q.gold}
        corpora.append(ImportedCorpus(
            name=cname, files={},
            queries=[q.model_copy(update={"id": f"{cname}-{q.id}"}) for q in queries],
            languages=sorted(x for x in exts if x is not None),
            description=f"{'SWE-QA-Pro' if pro else 'SWE-QA'} questions on {labels[key]} at "
            f"{key[1][:12]}, gold = the files the answer cites", git=key))
    provenance: dict[str, Any] = {
        "dataset": dataset, "task": "question -> the files its reference answer cites",
        "files": {f.name: {"sha256": digest(f), "bytes": f.stat().st_size}
                  for f in [*source.files, *([source.pins] if source.pins else [])]},
        "rows_read": len(rows), "rows_kept": kept,
        "gold": dict(sorted((k, v) for k, v in counts.items() if k not in (AMBIGUOUS, MISSING))),
        "dropped": dict(sorted(dropped.items())),
        "license": opts.license or (
            "SWE-QA-Pro Bench is Apache-2.0 (its card)" if pro else
            "SWE-QA is Apache-2.0") + "; each repository keeps its own license",
    }
    return Suite(dataset, corpora, provenance, kept=kept, dropped=dropped,
                 first_at=reader.first_at)


IMPORTER = Importer("sweqa", "SWE-QA-Pro / SWE-QA rows -> question -> files the answer cites",
                    load, download="SWE-QA-Pro's data/test.jsonl (the TIGER-Lab/SWE-QA-Pro-Bench "
                    "dataset) or SWE-QA's Benchmark/ folder beside its repo_commit.txt "
                    "(github.com/peng-weihan/SWE-QA-Bench), with --repos DIR holding a clone "
                    "of each repository", flags=frozenset({"--repos", "--max-tasks"}))
