"""Query words shared by the keyword adapters (grep, ripgrep, ctags, bm25).

Stdlib only, imported by scripts in this folder. A natural-language query
becomes search terms: lowercased, stopwords and words under three letters
dropped, identifiers split (camelCase, snake_case), crude suffixes stripped.
"""

from __future__ import annotations

import re

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for
from further get gets got had has have having he her here hers him his how i if in
into is it its itself just me more most my no nor not now of off on once only or other
our out over own same she should so some such than that the their them then there
these they this those through to too under until up use used uses using very was we
were what when where which while who whom why will with would you your code file
function method class find show does happen happens handled handle work works way
value values return returns given new make makes implement implemented implementation
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def keywords(query: str) -> list[str]:
    """Distinct search terms, in query order."""
    terms: list[str] = []
    for word in _WORD.findall(query):
        parts = [word, *_CAMEL.findall(word)]
        for part in parts:
            term = part.lower()
            if len(term) < 3 or term in STOPWORDS:
                continue
            term = stem(term)
            if term not in terms:
                terms.append(term)
    return terms


def stem(term: str) -> str:
    """Crude suffix stripping, so 'parsers' also finds 'parser' and 'handled' 'handle'."""
    if term.endswith("ies") and len(term) > 5:
        return term[:-3]
    if term.endswith("s") and not term.endswith("ss") and len(term) > 4:
        term = term[:-1]
    for suffix in ("ing", "ed"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 5:
            return term[: -len(suffix)]
    return term


def identifier_words(identifier: str) -> list[str]:
    """`parseHTTPHeader_v2` -> ['parse', 'http', 'header', 'v2']: for indexing names."""
    return [p.lower() for p in _CAMEL.findall(identifier) if p]
