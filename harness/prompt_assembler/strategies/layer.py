"""What a trimming strategy returns, and the notes and reasons every strategy shares.

A strategy gets a layer's units and its budget and returns a :class:`LayerResult`: the layer's
text, its token count, and which units survived: the run ``units[start:stop]``, or, for a
strategy that keeps units here and there, their indexes in ``kept_at``. ``notes`` say in
words what was dropped or cut; ``drop_reason`` is the short reason the manifest records for
every dropped unit::

    from harness.prompt_assembler.strategies.layer import LayerResult, empty

    result = empty(3, "not even the truncation marker fits the budget of 0", "no room")
    assert (result.start, result.stop, result.text) == (3, 3, "")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import cast

from harness._tokenizer import ApproximateTokenizer, TiktokenTokenizer, Tokenizer
from harness.prompt_assembler._values import Unit

__all__ = [
    "DROP_REASONS",
    "REASON_AFTER_CUT",
    "REASON_BUDGET",
    "REASON_HEAD",
    "REASON_LAYER",
    "REASON_NO_MARKER",
    "REASON_NO_ROOM",
    "LayerResult",
    "bare_texts",
    "byte_exact",
    "drop_note",
    "empty",
    "fits_whole",
    "ids",
    "no_marker_note",
    "no_room_note",
    "truncate_note",
]

DROP_REASONS = frozenset(
    {"budget", "stale", "denied", "duplicate", "outranked", "not_matched", "shadowed"}
)
"""The closed set of reasons a unit is not rendered; every manifest entry has one of them."""

# Every strategy drops for the budget; how (from the head, after the cut, the whole layer)
# is what the layer's notes say in words.
REASON_BUDGET = "budget"
REASON_HEAD = REASON_BUDGET
REASON_AFTER_CUT = REASON_BUDGET
REASON_NO_MARKER = REASON_BUDGET
REASON_LAYER = REASON_BUDGET
REASON_NO_ROOM = REASON_BUDGET


@dataclass(slots=True)
class LayerResult:
    """One trimmed layer: kept units are ``units[start:stop]`` (or those at ``kept_at``),
    rendered as ``rendered``, one string per kept unit in order."""

    text: str
    tokens: int
    start: int
    stop: int
    rendered: list[str]
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    nbytes: int = -1  # UTF-8 length of ``text``, when the byte path computed it
    drop_reason: str = ""  # why the dropped units are absent, for the manifest
    kept_at: tuple[int, ...] | None = None  # the kept units' indexes, when not start:stop

    def kept_indexes(self) -> Sequence[int]:
        """Indexes of the kept units among the units the strategy got, in order."""
        return range(self.start, self.stop) if self.kept_at is None else self.kept_at


_source, _text, _trust = attrgetter("source"), attrgetter("text"), attrgetter("trust")
_NONE, _TRUSTED = frozenset({None}), frozenset({"trusted"})


def bare_texts(units: Sequence[Unit]) -> list[str] | None:
    """The units' texts, when every unit is trusted and has no source, else None.

    Such a unit renders as its bare text unless that holds a ``<`` to neutralise: a caller
    that measures these texts checks the layer text it makes for a ``<`` and renders if so.
    """
    if set(map(_source, units)) <= _NONE and set(map(_trust, units)) <= _TRUSTED:
        return list(map(_text, units))
    return None


def byte_exact(tokenizer: Tokenizer) -> int | None:
    """bytes_per_token when counts are exactly ceil(bytes / bpt), else None (the byte path)."""
    cls = type(tokenizer)
    if cls is ApproximateTokenizer or (
        isinstance(tokenizer, ApproximateTokenizer)
        and cls.count is ApproximateTokenizer.count
        and cls.truncate is ApproximateTokenizer.truncate
    ):
        return cast(ApproximateTokenizer, tokenizer).bytes_per_token
    return None


def fits_whole(tokenizer: Tokenizer, text: str, budget: int) -> bool:
    """Whether ``tokenizer.count(text) <= budget``, without encoding all of a long ``text``
    where the tokenizer allows it.

    ``TiktokenTokenizer.truncate`` encodes piece by piece, stops where the budget runs out,
    and returns the text itself exactly when it fits (its pieces are the ones ``count`` sums),
    so it answers at the cost of about ``budget`` tokens of text. Any other tokenizer's
    ``truncate`` need only return some prefix that fits, so its text is counted.
    """
    cls = type(tokenizer)
    if isinstance(tokenizer, TiktokenTokenizer) and (
        cls.truncate is TiktokenTokenizer.truncate and cls.count is TiktokenTokenizer.count
    ):
        return len(tokenizer.truncate(text, budget)) == len(text)
    return tokenizer.count(text) <= budget


def empty(n: int, note: str, reason: str) -> LayerResult:
    """The empty layer: all ``n`` units dropped for ``reason``."""
    return LayerResult("", 0, n, n, [], notes=[note], nbytes=0, drop_reason=reason)


def ids(units: Sequence[Unit], start: int, stop: int) -> str:
    """The ids of ``units[start:stop]`` for a note, without copying a possibly huge slice."""
    if stop - start <= 3:
        return ", ".join(repr(units[i].id) for i in range(start, stop))
    return f"{units[start].id!r} .. {units[stop - 1].id!r}"


def drop_note(units: Sequence[Unit], h: int, budget: int) -> list[str]:
    """The note for ``units[:h]`` discarded from the head."""
    if h == 0:
        return []
    n = len(units)
    if h == n:
        last = units[-1].id
        if n == 1:
            return [f"unit {last!r} alone exceeds the budget of {budget}; discarded whole"]
        return [
            f"all {n} units discarded: the last unit {last!r} alone exceeds the budget of "
            f"{budget}, and units are discarded from the head, never split"
        ]
    return [
        f"discarded {h} of {n} units from the head ({ids(units, 0, h)}) to fit the budget "
        f"of {budget}; units are never split"
    ]


def no_room_note(units: Sequence[Unit], n: int, budget: int) -> str:
    """The note for a truncate_tail layer where not one character of the first unit fits."""
    return (
        f"not one character of unit {units[0].id!r} fits beside the truncation marker within "
        f"the budget of {budget}; all {n} units dropped"
    )


def no_marker_note(n: int, budget: int) -> str:
    """The note for a truncate_tail layer where not even the marker fits."""
    return f"not even the truncation marker fits the budget of {budget}; all {n} units dropped"


def truncate_note(units: Sequence[Unit], cut: int, budget: int, whole_text: bool) -> list[str]:
    """The note for a truncate_tail layer cut at ``units[cut]``."""
    unit = units[cut]
    how = "kept whole before the marker" if whole_text else "cut"
    note = f"layer over its budget of {budget}: truncated at unit {unit.id!r} ({how})"
    later = len(units) - cut - 1
    if later:
        note += f"; {later} later unit(s) dropped ({ids(units, cut + 1, len(units))})"
    return [note]
