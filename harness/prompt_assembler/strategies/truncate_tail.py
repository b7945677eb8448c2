"""``truncate_tail``: the layer keeps the longest prefix of its rendering that fits.

The cut is marked with ``TRUNCATION_MARKER`` (which counts against the budget); units wholly
inside the prefix are kept, the cut unit is kept too and the layer is reported ``truncated``;
later units are dropped. If not even the marker fits, the layer is empty::

    from harness.prompt_assembler import TRUNCATION_MARKER, Unit, assemble

    blob = Unit("overview", "word " * 5000, source=".AGENTS/overview.md")
    layer = assemble({"project_context": [blob]}).layer("project_context")
    assert layer.truncated and TRUNCATION_MARKER in layer.text
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from harness._tokenizer import Tokenizer, utf8_len, utf8_prefix
from harness.prompt_assembler._render import parts as unit_parts
from harness.prompt_assembler._values import TRUNCATION_MARKER, UNIT_SEPARATOR, Unit
from harness.prompt_assembler.strategies.layer import (
    REASON_AFTER_CUT,
    REASON_NO_MARKER,
    REASON_NO_ROOM,
    LayerResult,
    empty,
    fits_whole,
    no_marker_note,
    no_room_note,
    truncate_note,
)

__all__ = ["trim", "trim_bytes"]

_GROW_STEPS = 4
"""Bounded attempts to use room a non-additive tokenizer left after a truncate_tail cut."""
_WINDOW_CHARS_PER_TOKEN = 64
"""Characters of text re-tokenized per token of room when growing a cut."""


def trim_bytes(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> LayerResult:
    """The byte-exact path (counts are ceil(bytes / bpt)); see docs/architecture/asm.md."""
    sep_len = len(UNIT_SEPARATOR)
    marker_len = utf8_len(TRUNCATION_MARKER)
    parts: list[tuple[str, str, str]] = []
    starts: list[int] = []  # bytes before each unit's rendering, separators included
    cut = -1  # last unit that can start: its tags and the marker fit after the units before
    offset = 0
    fits_whole = True
    for unit in units:
        opening, text, closing = unit_parts(unit)
        tags = utf8_len(opening) + len(closing)
        if offset + tags + marker_len <= max_bytes:
            cut = len(parts)
        parts.append((opening, text, closing))
        starts.append(offset)
        size = tags + utf8_len(text)
        if offset + size > max_bytes:
            fits_whole = False
            break
        offset += size + sep_len
    n = len(units)
    if fits_whole:
        rendered = [o + t + c for o, t, c in parts]
        nbytes = max(offset - sep_len, 0)
        return LayerResult(
            UNIT_SEPARATOR.join(rendered), -(-nbytes // bpt), 0, n, rendered, nbytes=nbytes
        )
    if cut < 0:
        return empty(n, no_marker_note(n, budget), REASON_NO_MARKER)
    opening, text, closing = parts[cut]
    room = max_bytes - starts[cut] - utf8_len(opening) - len(closing) - marker_len
    kept_text = utf8_prefix(text, room)
    if text and not kept_text:
        # Not one character of the cut unit fits: it is not in the text, so it is not kept. The
        # marker then closes the unit before it, which fits whole (its marker needs no more room
        # than the separator, tags and marker that fit after it).
        if cut == 0:
            return empty(n, no_room_note(units, n, budget), REASON_NO_ROOM)
        cut -= 1
        opening, text, closing = parts[cut]
        kept_text = text
    rendered = [o + t + c for o, t, c in parts[:cut]]
    rendered.append(f"{opening}{kept_text}{TRUNCATION_MARKER}{closing}")
    layer_text = UNIT_SEPARATOR.join(rendered)
    nbytes = utf8_len(layer_text)
    notes = truncate_note(units, cut, budget, len(kept_text) == len(text))
    return LayerResult(
        layer_text, -(-nbytes // bpt), 0, cut + 1, rendered, True, notes, nbytes, REASON_AFTER_CUT
    )


def trim(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> LayerResult:
    """The general path: counts verified on the final text; see docs/architecture/asm.md."""
    n = len(units)
    count = tokenizer.count
    parts = [unit_parts(unit) for unit in units]
    rendered = [o + t + c for o, t, c in parts]
    whole = UNIT_SEPARATOR.join(rendered)
    # truncate() finds where the budget (less room for the marker) runs out, encoding only as
    # far as it keeps, and memoising tokenizers record the whole count when it all fits. A
    # closing tag the cut unit may need is left to the shrinking below: reserving it for units
    # without a source would start the cut too early and leave growing to make up the
    # difference.
    reserve = count(TRUNCATION_MARKER)
    prefix = tokenizer.truncate(whole, max(budget - reserve, 0))
    if len(prefix) == len(whole) or fits_whole(tokenizer, whole, budget):
        tokens = count(whole)
        if tokens <= budget:
            return LayerResult(whole, tokens, 0, n, rendered)
    starts: list[int] = []
    offset = 0
    for text in rendered:
        starts.append(offset)
        offset += len(text) + len(UNIT_SEPARATOR)
    cuts = _Cuts(parts, whole, starts, budget, tokenizer)
    # Start where the budget ran out. A cut unit must show at least one character of its own
    # text (else it is not in the text and cannot be kept): the marker then closes the unit
    # before it, kept whole if it fits so.
    cut = max(bisect.bisect_right(starts, len(prefix)) - 1, 0)
    keep = min(max(len(prefix) - starts[cut] - len(parts[cut][0]), 0), len(parts[cut][1]))
    marker_fits = False
    while True:
        fitted = cuts.shrink(cut, keep)
        if fitted is None:
            if marker_fits:
                return empty(n, no_room_note(units, n, budget), REASON_NO_ROOM)
            return empty(n, no_marker_note(n, budget), REASON_NO_MARKER)
        cut, keep, tokens = cuts.grow(*fitted)
        if keep or not parts[cut][1]:
            break
        marker_fits = True
        if cut == 0:
            return empty(n, no_room_note(units, n, budget), REASON_NO_ROOM)
        cut, keep = cut - 1, len(parts[cut - 1][1])
    layer_text = cuts.build(cut, keep)
    opening, text, closing = parts[cut]
    kept = [*rendered[:cut], f"{opening}{text[:keep]}{TRUNCATION_MARKER}{closing}"]
    notes = truncate_note(units, cut, budget, keep == len(text))
    return LayerResult(layer_text, tokens, 0, cut + 1, kept, True, notes, -1, REASON_AFTER_CUT)


@dataclass(frozen=True, slots=True)
class _Cuts:
    """One layer's rendering and the ways ``trim`` tries a cut in it.

    A cut is ``(cut, keep)``: units before ``cut`` whole, then ``keep`` characters of unit
    ``cut``'s text, the marker and its closing tag.
    """

    parts: list[tuple[str, str, str]]
    whole: str
    starts: list[int]
    """Characters before each unit's rendering, separators included."""
    budget: int
    tokenizer: Tokenizer

    def build(self, cut: int, keep: int) -> str:
        """The layer text of the cut ``(cut, keep)``."""
        opening, text, closing = self.parts[cut]
        return f"{self.whole[: self.starts[cut]]}{opening}{text[:keep]}{TRUNCATION_MARKER}{closing}"

    def shrink(self, cut: int, keep: int) -> tuple[int, int, int] | None:
        """Shrink until the layer (marker included) fits, backing into earlier units if not
        even the cut unit's tags and marker fit; None if not even the marker fits."""
        count, budget, parts = self.tokenizer.count, self.budget, self.parts
        while cut >= 0:
            text = parts[cut][1]
            while True:
                tokens = count(self.build(cut, keep))
                if tokens <= budget or keep == 0:
                    break
                kept_text = text[:keep]
                shorter = self.tokenizer.truncate(
                    kept_text, max(count(kept_text) - (tokens - budget), 0)
                )
                keep = min(len(shorter), keep - 1)
            if tokens <= budget:
                return cut, keep, tokens
            cut -= 1
            if cut >= 0:
                keep = len(parts[cut][1])
        return None

    def grow(self, cut: int, keep: int, tokens: int) -> tuple[int, int, int]:
        """Use room a non-additive tokenizer left: a few bounded steps, each verified. Only a
        window after the cut is re-tokenized, never the whole (possibly huge) unit text.
        Entering the next unit with nothing of it shown is only a step, never a result."""
        count, budget, parts = self.tokenizer.count, self.budget, self.parts
        best = (cut, keep, tokens)
        steps = 0
        while steps < _GROW_STEPS:
            room = budget - tokens
            text = parts[cut][1]
            if room <= 0:
                break
            if keep == len(text):
                if cut + 1 >= len(parts):
                    break
                entered = count(self.build(cut + 1, 0))
                if entered > budget:
                    break
                cut, keep, tokens = cut + 1, 0, entered
                if not parts[cut][1]:
                    best = (cut, keep, tokens)  # an empty text is whole already: a free step
                else:
                    steps += 1
                continue
            steps += 1
            window = text[: keep + (room + 1) * _WINDOW_CHARS_PER_TOKEN]
            longer = len(self.tokenizer.truncate(window, count(text[:keep]) + room))
            if longer <= keep:
                break
            grown = count(self.build(cut, longer))
            if grown > budget:
                break
            keep, tokens = longer, grown
            best = (cut, keep, tokens)
        return best
