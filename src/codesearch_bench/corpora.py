"""corpora.toml: pinned corpora, and `setup` turning one into a candidate tree.

Layout under the corpora root, per corpus:

    <name>/download/   cached archive (pypi sdist, npm tarball)
    <name>/checkout/   the unpacked archive or git work tree at the pin
    <name>/tree/       the candidate tree: hard links to the selected files
    <name>/manifest.json   files, bytes, files per language, tier, pin

Every engine is given exactly `tree/`; gold and result paths are relative to
it. A finished setup leaves a marker holding the corpus's identity (its
whole entry in corpora.toml), so running setup again is a file read.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rapidfuzz import process as fuzz_process

from . import sources, unpack
from .errors import CorpusError
from .tree import Manifest, build_tree

MARKER = ".setup-done.json"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str | None = None
    license: str | None = Field(default=None, description="who may redistribute what")
    homepage: str | None = None
    default: bool = Field(default=False, description="part of the default comparison")
    subtrees: list[str] = Field(default=["."], min_length=1)
    include: list[str] = Field(default=["**"])
    exclude: list[str] = Field(default=[])
    languages: list[str] = Field(default=[])
    queries: str | None = Field(default=None, description="query set, relative to corpora.toml")
    h_as_cpp: bool = Field(default=False, description="parse .h files as C++")

    @field_validator("subtrees")
    @classmethod
    def _relative(cls, value: list[str]) -> list[str]:
        for sub in value:
            parts = Path(sub).parts
            if Path(sub).is_absolute() or ".." in parts:
                raise ValueError(f"subtree {sub!r} must be a relative path inside the checkout")
        return value


class GitCorpus(_Base):
    source: Literal["git"]
    url: str
    commit: str

    @field_validator("commit")
    @classmethod
    def _commit(cls, value: str) -> str:
        if not _HEX40.match(value):
            raise ValueError("a git pin is the full 40-hex commit id (lower case)")
        return value

    def pin(self) -> str:
        return f"git {self.url}@{self.commit}"


class PypiCorpus(_Base):
    source: Literal["pypi"]
    package: str
    version: str
    sha256: str
    filename: str | None = None

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not _HEX64.match(value):
            raise ValueError("sha256 is 64 lower-case hex digits")
        return value

    def pin(self) -> str:
        return f"pypi {self.package}=={self.version} sha256:{self.sha256}"


class NpmCorpus(_Base):
    source: Literal["npm"]
    package: str
    version: str
    integrity: str

    @field_validator("integrity")
    @classmethod
    def _integrity(cls, value: str) -> str:
        if not re.match(r"^sha(1|256|384|512)-[A-Za-z0-9+/=]+$", value):
            raise ValueError("integrity looks like 'sha512-<base64>' (from `npm view NAME@VER "
                             "dist.integrity`)")
        return value

    def pin(self) -> str:
        return f"npm {self.package}@{self.version} {self.integrity}"


class PathCorpus(_Base):
    source: Literal["path"]
    path: str
    sha256: str | None = None

    def pin(self) -> str:
        return f"path {self.path}" + (f" sha256:{self.sha256}" if self.sha256 else " (unpinned)")


CorpusModel = Annotated[GitCorpus | PypiCorpus | NpmCorpus | PathCorpus,
                        Field(discriminator="source")]
_MODELS: dict[str, type[_Base]] = {"git": GitCorpus, "pypi": PypiCorpus, "npm": NpmCorpus,
                                   "path": PathCorpus}


@dataclass(frozen=True)
class Corpus:
    name: str
    spec: GitCorpus | PypiCorpus | NpmCorpus | PathCorpus
    config_file: Path

    @property
    def pin(self) -> str:
        return self.spec.pin()

    @property
    def identity(self) -> str:
        """Hash of everything that shapes the tree: a change means a rebuild."""
        blob = json.dumps(self.spec.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def queries_path(self) -> Path | None:
        if self.spec.queries is None:
            return None
        return (self.config_file.parent / self.spec.queries).resolve()


# -- loading corpora.toml ------------------------------------------------------
def load_corpora(path: Path) -> dict[str, Corpus]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file",
                          hint="run from the repository root or pass --corpora-file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{path}: not valid TOML: {exc}") from None
    extra = set(data) - {"corpus"}
    if extra:
        raise CorpusError(f"{path}: unknown top-level key(s) {sorted(extra)}; "
                          "corpora are declared as [corpus.NAME] tables")
    table = data.get("corpus", {})
    if not isinstance(table, dict):
        raise CorpusError(f"{path}: `corpus` must be a table of [corpus.NAME] entries")
    out: dict[str, Corpus] = {}
    for name, entry in table.items():
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name):
            raise CorpusError(f"{path}: corpus {name!r}: use letters, digits, '.', '_', '-'")
        if not isinstance(entry, dict):
            raise CorpusError(f"{path}: corpus {name!r} must be a table")
        out[name] = Corpus(name, _validate(path, name, entry), path.resolve())
    return out


def _validate(path: Path, name: str, entry: dict[str, Any]) -> Any:
    source = entry.get("source")
    model = _MODELS.get(source) if isinstance(source, str) else None
    if model is None:
        raise CorpusError(f"{path}: corpus `{name}`: key `source`: must be one of "
                          f"{', '.join(_MODELS)} (got {source!r})")
    try:
        return model.model_validate(entry)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                fields = list(model.model_fields)
                match = fuzz_process.extractOne(str(err["loc"][-1]), fields, score_cutoff=60)
                tip = f"; did you mean `{match[0]}`?" if match else f"; known: {', '.join(fields)}"
                lines.append(f"{path}: corpus `{name}`: key `{key}`: unknown key{tip}")
            elif err["type"] == "missing":
                lines.append(f"{path}: corpus `{name}`: key `{key}`: required for "
                             f"source = {source!r}")
            else:
                msg = err["msg"].removeprefix("Value error, ")
                lines.append(f"{path}: corpus `{name}`: key `{key}`: {msg}")
        raise CorpusError("\n".join(lines)) from None


def select(corpora: dict[str, Corpus], names: str | None) -> list[Corpus]:
    """`a,b`, `all`, or None for the default set."""
    if names is None or names == "default":
        chosen = [c for c in corpora.values() if c.spec.default]
        return chosen or list(corpora.values())
    if names == "all":
        return list(corpora.values())
    out = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in corpora:
            match = fuzz_process.extractOne(name, list(corpora), score_cutoff=50)
            tip = f"; did you mean {match[0]!r}?" if match else ""
            raise CorpusError(f"no corpus named {name!r} in corpora.toml{tip}",
                              hint=f"known corpora: {', '.join(corpora)}")
        out.append(corpora[name])
    return out


# -- setup -------------------------------------------------------------------------
@dataclass(frozen=True)
class SetupResult:
    corpus: Corpus
    tree: Path
    manifest: Manifest
    cached: bool
    how: str


def corpus_dir(root: Path, corpus: Corpus) -> Path:
    return root / corpus.name


def tree_path(root: Path, corpus: Corpus) -> Path:
    return corpus_dir(root, corpus) / "tree"


def is_set_up(root: Path, corpus: Corpus) -> bool:
    base = corpus_dir(root, corpus)
    try:
        marker = json.loads((base / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return marker.get("identity") == corpus.identity and (base / "tree").is_dir()


def setup(corpus: Corpus, root: Path, *, progress: sources.Progress | None = None) -> SetupResult:
    """Fetch, verify, unpack and build the candidate tree (or reuse a verified one)."""
    root = root.resolve()
    base = corpus_dir(root, corpus)
    if is_set_up(root, corpus):
        return SetupResult(corpus, base / "tree", Manifest.read(base / "manifest.json"),
                           True, "already set up")
    base.mkdir(parents=True, exist_ok=True)
    (base / MARKER).unlink(missing_ok=True)
    checkout, how = _materialize(corpus, base, progress or sources._noop)
    manifest = build_tree(corpus, checkout, base)
    (base / MARKER).write_text(json.dumps({"identity": corpus.identity, "pin": corpus.pin}))
    return SetupResult(corpus, base / "tree", manifest, False, how)


def _materialize(corpus: Corpus, base: Path, progress: sources.Progress) -> tuple[Path, str]:
    spec = corpus.spec
    what = f"corpus {corpus.name!r}"
    checkout = base / "checkout"
    pin_file = base / ".checkout-pin"
    if checkout.is_dir() and pin_file.is_file() and pin_file.read_text() == corpus.pin:
        return checkout, "checkout reused"
    if checkout.exists():
        shutil.rmtree(checkout)
    pin_file.unlink(missing_ok=True)
    if isinstance(spec, GitCorpus):
        how = sources.git_checkout(spec.url, spec.commit, checkout, what=what)
    elif isinstance(spec, PypiCorpus):
        archive = _pypi_archive(spec, base, what, progress)
        unpack.extract(archive, checkout)
        how = f"sdist {archive.name}, sha256 verified"
    elif isinstance(spec, NpmCorpus):
        archive = _npm_archive(spec, base, what)
        unpack.extract(archive, checkout)
        how = f"npm tarball {archive.name}, integrity verified"
    else:
        source = Path(spec.path).expanduser()
        if not source.is_absolute():
            source = corpus.config_file.parent / source
        if source.is_dir():
            if spec.sha256:
                raise CorpusError(f"{what}: sha256 pins an archive, but {source} is a directory")
            return source, "local directory (used in place)"
        if not source.is_file():
            raise CorpusError(f"{what}: path {source} does not exist")
        if spec.sha256:
            sources.check_sha256(source, spec.sha256, what)
        unpack.extract(source, checkout)
        how = "local archive" + (", sha256 verified" if spec.sha256 else " (unpinned)")
    pin_file.write_text(corpus.pin)
    return checkout, how


def _pypi_archive(spec: PypiCorpus, base: Path, what: str, progress: sources.Progress) -> Path:
    cache = base / "download"
    for cached in sorted(cache.iterdir()) if cache.is_dir() else []:
        if cached.is_file() and not cached.name.endswith(".part") and \
                sources.file_digest(cached, "sha256").hex() == spec.sha256:
            return cached  # a verified download is its own cache key
    name, url, index_sha = sources.pypi_sdist(spec.package, spec.version, spec.filename)
    if index_sha and index_sha != spec.sha256:
        raise CorpusError(
            f"{what}: sha256 mismatch: corpora.toml pins {spec.sha256}, the index says "
            f"{index_sha} for {name}; nothing was downloaded or unpacked")
    archive = cache / name
    sources.download(url, archive, label=f"{spec.package} {spec.version}", progress=progress)
    try:
        sources.check_sha256(archive, spec.sha256, what)
    except CorpusError:
        archive.unlink(missing_ok=True)  # a bad download is not kept as a cache
        raise
    return archive


def _npm_archive(spec: NpmCorpus, base: Path, what: str) -> Path:
    cache = base / "download"
    cached = sorted(cache.glob("*.tgz")) if cache.is_dir() else []
    archive = next((p for p in cached if spec.version in p.name), None)
    if archive is None:
        archive = sources.npm_pack(spec.package, spec.version, cache)
    try:
        sources.check_integrity(archive, spec.integrity, what)
    except CorpusError:
        archive.unlink(missing_ok=True)
        raise
    return archive


