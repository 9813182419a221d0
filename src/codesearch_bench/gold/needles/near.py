"""Near-duplicate queries within a corpus: two definitions documented alike have two answers.

`codes.is_client_error` and `Response.is_client_error` carry almost the same
doc ("Returns True for 4xx status codes, False otherwise." / "A property which
is True for 4xx status codes, False otherwise."); either definition answers
either needle, so both go. Two queries are near-duplicates when rapidfuzz's
`fuzz.token_set_ratio` of their lower-cased, space-normalized texts is at
least THRESHOLD. The token-set score forgives word order and a phrase one
text adds to the other (that pair scores 91; plain `fuzz.ratio` gives 84);
90 still parts sentences that share a frame but not a subject ("Return True if
this is a client error" / "True if the status is a client error" scores 85).
The rule errs on the side of dropping: "Returns the first element of array"
and "Returns the last element of array" (92) go too -- a needle lost, never a
second right answer counted as a miss. Only pairs sharing a word trigram are
compared (at 90 a pair always shares several), so the cost stays near linear.
"""

from __future__ import annotations

from collections import defaultdict

from rapidfuzz import fuzz

THRESHOLD = 90.0
_BUCKET_LIMIT = 400  # a trigram in more queries than this is a stock phrase: others decide


def normalized(text: str) -> str:
    return " ".join(text.lower().split())


def near_duplicates(texts: list[str], threshold: float = THRESHOLD) -> set[int]:
    """Indexes of the texts with a near-duplicate (exact copies included) among the others."""
    norm = [normalized(t) for t in texts]
    buckets: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, text in enumerate(norm):
        said = text.split()
        grams = {tuple(said[j:j + 3]) for j in range(max(len(said) - 2, 1))}
        for gram in grams:
            buckets[gram].append(i)
    caught: set[int] = set()
    compared: set[tuple[int, int]] = set()
    for members in buckets.values():
        if len(members) < 2 or len(members) > _BUCKET_LIMIT:
            continue
        for a_at, a in enumerate(members):
            for b in members[a_at + 1:]:
                if (a, b) in compared:
                    continue
                compared.add((a, b))
                if fuzz.token_set_ratio(norm[a], norm[b], score_cutoff=threshold):
                    caught.update((a, b))
    return caught
