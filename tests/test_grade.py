"""grade.py: what a relevant item is at each granularity, and where it was first found."""

from __future__ import annotations

from codesearch_bench.model import Hit, Slot, Span
from codesearch_bench.scoring.grade import grade, relevant_files, relevant_spans


def slot(path: str, rank: int, *chunks: tuple[int, int]) -> Slot:
    return Slot(path, rank, tuple(Hit(path, a, b) for a, b in chunks))


F = Span("a.py", 1, 5, "f")
G = Span("a.py", 20, 30, "g")
H = Span("b.py", 3, 4, "h")


def test_two_gold_symbols_in_one_file_are_one_relevant_file() -> None:
    graded = grade([slot("c.py", 1, (1, 2)), slot("a.py", 2, (1, 40))], [F, G], spans=True)
    assert graded.n_gold == 1 and graded.file_gains == (0, 1)
    # ...and two relevant spans, both found by the one chunk that covers them
    assert graded.n_gold_chunks == 2 and graded.chunk_gains == (0, 2)
    assert graded.first_file_slot == 2 and graded.first_chunk == (2, 0)


def test_several_chunks_overlapping_one_span_credit_it_once() -> None:
    graded = grade([slot("a.py", 1, (2, 3), (4, 9), (1, 1))], [F], spans=True)
    assert graded.chunk_gains == (1,)
    assert graded.first_chunk == (1, 0)


def test_each_span_of_a_file_is_found_by_its_own_chunk() -> None:
    graded = grade([slot("b.py", 1, (9, 9)), slot("a.py", 2, (50, 60), (25, 26), (2, 2))],
                   [F, G, H], spans=True)
    assert graded.n_gold == 2 and graded.file_gains == (1, 1)
    assert graded.n_gold_chunks == 3 and graded.chunk_gains == (0, 2)
    assert graded.first_chunk == (2, 1)  # slot 2's second chunk is the first gold one shown


def test_file_level_items_and_repeated_spans() -> None:
    gold = [F, Span("a.py"), Span("a.py", 1, 5, "f_alias"), Span("c.py")]
    assert relevant_files(gold) == ["a.py", "c.py"]
    assert relevant_spans(gold) == [("a.py", 1, 5)]
    graded = grade([slot("c.py", 1, (1, 1)), slot("a.py", 2, (5, 5))], gold, spans=True)
    assert graded.file_gains == (1, 1) and graded.n_gold == 2
    assert graded.chunk_gains == (0, 1) and graded.n_gold_chunks == 1
    assert grade([slot("a.py", 1)], [Span("a.py")], spans=True).chunk_gains is None
    assert grade([slot("a.py", 1, (1, 2))], [F], spans=False).chunk_gains is None


def test_first_slots_stay_within_the_stored_slots() -> None:
    slots = [slot(f"x{i}.py", i + 1, (1, 1)) for i in range(24)] + [slot("a.py", 25, (1, 9))]
    graded = grade(slots, [F], spans=True)
    # the gains still see slot 25 (a cutoff past 20 may count it) ...
    assert graded.file_gains[24] == 1 and graded.chunk_gains is not None
    assert graded.chunk_gains[24] == 1
    # ... but what is stored per query points only into the 20 stored slots
    assert graded.first_file_slot is None and graded.first_chunk is None
    assert grade(slots, [F], spans=True, depth=25).first_file_slot == 25
    at_twenty = grade(slots[5:], [F], spans=True)
    assert at_twenty.first_file_slot == 20 and at_twenty.first_chunk == (20, 0)
