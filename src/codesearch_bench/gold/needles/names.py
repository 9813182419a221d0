"""How much of a definition's name a needle's query holds: the name-overlap rule.

A needle whose query holds the words of its gold's name tests name matching,
not retrieval: "an error HTTP status" finds `HTTPStatusError` by its name
alone. So every needle carries its overlap, measured the same way on both
sides:

- words: an identifier is split on case changes, digits and underscores
  (`_parse_header_links` -> parse, header, links; `HTTPStatusError` -> http,
  status, error); the query is split the same way, so `ioprio_set()` in a
  query counts as ioprio and set;
- lower-cased and lightly stemmed (plural -s/-es/-ies, -ing, -ed, a final e:
  parsed, parses, parsing and parse meet as "pars");
- function words (the, of, is ...) are not content words of a name, unless
  the name has no other (`any`, `forEach`);
- a name word also counts when it and a query word start alike for four
  letters or more (config/"configuration", optimize/"optimization") or it
  stands inside one (case in "lowercase"); the whole name counts however the
  query splits it (`modkey` in "modKey", `FileName` in "file name"), two name
  words joined in one query word count ("bigint" for `PseudoBigInt`), as do
  two query words joined into a name word ("E Tag" for `etag`, an acronym's
  plural is one word: "CPUs"), and a one-word name holding a query word of
  three letters or more counts (`fromfile`/"file", `naturalday`/"day");
- the corpus's common prefixes are not the name's words: a first word that
  opens at least 5% of the corpus's multi-word names, and at least 20 of them
  (`psutil_`, `redis`, `rb_`), says which project, not which definition;
  common verbs (get, set, make ...) never count as prefixes.

`own` is the share of the own name's content words found in the query, and
its tag is `name:none` (0), `name:full` (all) or `name:partial`; the
enclosing names (a method's class, a nested function's parents) are measured
the same way as `scope:`. The headline needle track keeps `name:none` only.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


def _wordlist(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Not content words: they name no definition.
STOPWORDS = _wordlist("""
a an the of to in on at by for from with without into onto as is are was were be been being
it its this that these those and or not no nor if then else than so such can could may might
must shall should will would do does did done has have had there their them they we you your
our i me my he she his her via per all any each every some one two new""")

#: First words that open many names in every codebase; never a corpus prefix.
_NOT_PREFIXES = _wordlist("""
get set is has make new to on create init add remove delete read write parse handle check
build run load update find do can should test use reset with from as start stop open close
print format apply compute find try visit emit resolve register""")

PREFIX_SHARE = 0.05
PREFIX_MIN_NAMES = 20

# An acronym's plural ("CPUs", "IDs") is one word, not "cp" + "us".
_IDENT_PART = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def stem(word: str) -> str:
    """A light suffix-stripper: enough that parse/parsed/parses/parsing and skip/skipped meet."""
    if len(word) <= 3:
        return word
    for suffix, repl in (("sses", "ss"), ("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""),
                         ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and \
                    word[-1] not in "lsz":
                word = word[:-1]  # skipped -> skipp -> skip
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def split_words(text: str) -> list[str]:
    """Every word of a text or identifier, lower-cased: `HTTPStatusError` -> http, status, error."""
    return [p.lower() for p in _IDENT_PART.findall(text)]


def common_prefixes(names: Iterable[str]) -> frozenset[str]:
    """The corpus's namespace prefixes: first words opening many of its multi-word names."""
    firsts: Counter[str] = Counter()
    multi = 0
    for name in names:
        words = split_words(name)
        if len(words) >= 2:
            multi += 1
            firsts[words[0]] += 1
    return frozenset(w for w, n in firsts.items()
                     if n >= PREFIX_MIN_NAMES and n >= PREFIX_SHARE * multi
                     and w not in _NOT_PREFIXES and w not in STOPWORDS and not w.isdigit())


def name_words(name: str, prefixes: frozenset[str]) -> set[str]:
    """A name's content words without the corpus's common prefix (if it has more words).

    A name made of function words alone (`any`, `forEach`) keeps them: they are its name."""
    words = [w for w in split_words(name) if not w.isdigit()]
    content = [w for w in words if w not in STOPWORDS] or words
    if len(content) >= 2 and content[0] in prefixes:
        content = content[1:]
    return set(content)


def _found(name_word: str, said: set[str]) -> bool:
    """A name word in the query (`said`: its words and their stems), by stem or by shape: one
    starts the other with four letters or more (config/configuration, optimize/optimization,
    wrap/wrapper), or a name word of four letters or more stands inside a query word (case
    in "lowercase")."""
    if stem(name_word) in said:
        return True
    for w in said:
        for n in (name_word, stem(name_word)):
            shared = _shared_start(n, w)
            if shared >= 4 and shared >= 0.8 * min(len(n), len(w)):
                return True
        if len(name_word) >= 4 and name_word in w:
            return True
    return False


def _shared_start(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _inside(name: str, query: str) -> bool:
    """A one-word name (`fromfile`, `naturalday`, `regassign`) holding a content word of the
    query, or its stem, of three letters or more ("file", "day", "assigned")."""
    words = split_words(name)
    if len(words) != 1 or len(words[0]) < 6:
        return False
    said = [w for w in split_words(query) if w not in STOPWORDS and not w.isdigit()]
    return any(len(form) >= 3 and form in words[0] for w in said for form in (w, stem(w)))


def _whole(name: str, query: str) -> bool:
    """The name as one word in the query, however split: `modkey` in "modKey", `FileName` in
    "filename" or "file name"."""
    joined = "".join(split_words(name))
    if len(joined) < 4:
        return False
    said = split_words(query)
    return any("".join(said[i:i + n]) == joined for n in (1, 2, 3, 4)
               for i in range(len(said) - n + 1)) or \
        joined in {t.lower().replace("_", "") for t in re.findall(r"\w+", query)}


@dataclass(frozen=True)
class Overlap:
    own: float  # share of the own name's content stems found in the query, 0..1
    scope: float | None  # the same over the enclosing names; None at the top level

    @property
    def tag(self) -> str:
        return f"name:{_level(self.own)}"

    @property
    def tags(self) -> list[str]:
        return [self.tag] + ([] if self.scope is None else [f"scope:{_level(self.scope)}"])

    @property
    def blind(self) -> bool:
        return self.own == 0


def _level(share: float) -> str:
    return "none" if share == 0 else "full" if share >= 1 else "partial"


def _share(words: set[str], query: set[str], joined: frozenset[str] = frozenset()) -> float:
    return sum(w in joined or _found(w, query) for w in words) / len(words) if words else 0.0


def _said(query: str) -> set[str]:
    """The query's words, their stems, and each two neighbours joined ("E Tag" -> etag)."""
    raw = [w for w in split_words(query) if not w.isdigit()]
    return set(raw) | {stem(w) for w in raw} | {a + b for a, b in itertools.pairwise(raw)}


def _joined(name: str, said: set[str]) -> set[str]:
    """Name words that two of them joined stand for in the query ("bigint": big, int)."""
    words = split_words(name)
    return {w for a, b in itertools.pairwise(words)
            for w in (a, b) if a + b in said or stem(a + b) in said}


def measure(query: str, qualname: str, prefixes: frozenset[str]) -> Overlap:
    """The overlap of a query with the name at the end of `qualname` and with its parents."""
    said = _said(query)
    parts = qualname.split(".")
    joined = frozenset(_joined(parts[-1], said))
    # Function words a query writes joined as in the name ("forEach") are name words there.
    own_words = name_words(parts[-1], prefixes) | joined
    own = 1.0 if _whole(parts[-1], query) or _inside(parts[-1], query) else \
        _share(own_words, said, joined)
    enclosing: set[str] = set()
    for part in parts[:-1]:
        enclosing |= name_words(part, prefixes)
    return Overlap(round(own, 3), round(_share(enclosing, said), 3) if parts[:-1] else None)
