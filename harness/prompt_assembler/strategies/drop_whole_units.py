"""``drop_whole_units``: whole units are discarded from the head until the rest fits.

Units arrive in discard order (least authoritative, or oldest, first) and are never split; a
unit larger than the budget is discarded whole and the layer may end empty::

    from harness.prompt_assembler import Unit, assemble

    rules = [Unit("old", "x" * 40), Unit("new", "y" * 40)]
    prompt = assemble({"business_rules": rules}, budgets={"business_rules": 10})
    assert prompt.layer("business_rules").kept == ("new",)
"""

from __future__ import annotations

from collections.abc import Sequence

from harness._tokenizer import Tokenizer, utf8_len
from harness.prompt_assembler._render import render
from harness.prompt_assembler._values import UNIT_SEPARATOR, Unit
from harness.prompt_assembler.strategies.layer import REASON_HEAD, LayerResult, drop_note

__all__ = ["trim", "trim_bytes"]

_SLACK = 4
"""Tokens by which joined text may undercut the sum of its parts before we look for it."""


def trim_bytes(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> LayerResult:
    """The byte-exact path (counts are ceil(bytes / bpt))."""
    # Walk from the tail (the units that survive) and stop at the first unit that does not
    # fit: the head is discarded without ever being rendered or measured. (A plain loop beats
    # chunked C-level passes here: CPython 3.11 specialises these attribute and length ops.)
    limit = max_bytes + len(UNIT_SEPARATOR)  # n units carry n - 1 separators: credit one back
    fitted = _bare_tail(units, limit)
    if fitted is None:
        fitted = _rendered_tail(units, limit)
    kept, total, text = fitted
    n = len(units)
    h = n - len(kept)
    nbytes = total - len(UNIT_SEPARATOR) if kept else 0
    return LayerResult(
        text,
        -(-nbytes // bpt),
        h,
        n,
        kept,
        notes=drop_note(units, h, budget),
        nbytes=nbytes,
        drop_reason=REASON_HEAD,
    )


def _bare_tail(units: Sequence[Unit], limit: int) -> tuple[list[str], int, str] | None:
    """(kept texts, their bytes with one separator each, the layer text) when every kept unit
    renders as its bare text (trusted, no source, nothing to neutralise), else None."""
    # The common case, checked once on the joined text rather than per unit: a layer with a
    # "<" anywhere is measured again by ``_rendered_tail``.
    sep_len = len(UNIT_SEPARATOR)
    room = limit  # counting down saves an addition (an int allocation) per unit
    kept: list[str] = []
    append = kept.append
    for unit in reversed(units):
        text = unit.text
        # utf8_len, inlined: this loop runs once per kept unit
        size = (
            len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        ) + sep_len
        if size > room:
            break
        room -= size
        # Checked only for the units kept: rendering only adds text, so a unit whose bare
        # text does not fit would not fit rendered either.
        if unit.source is not None or unit.trust != "trusted":
            return None
        append(text)
    kept.reverse()
    joined = UNIT_SEPARATOR.join(kept)
    return None if "<" in joined else (kept, limit - room, joined)


def _rendered_tail(units: Sequence[Unit], limit: int) -> tuple[list[str], int, str]:
    """What ``_bare_tail`` gives, for any units: each rendered as it appears."""
    sep_len = len(UNIT_SEPARATOR)
    total = 0
    kept: list[str] = []
    append = kept.append
    for unit in reversed(units):
        text = unit.text
        if unit.source is not None or "<" in text or unit.trust != "trusted":
            text = render(unit)
        size = (len(text) if text.isascii() else utf8_len(text)) + sep_len
        if total + size > limit:
            break  # this unit and everything before it are discarded
        total += size
        append(text)
    kept.reverse()
    return kept, total, UNIT_SEPARATOR.join(kept)


def trim(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> LayerResult:
    """The general path: estimates steer, verified counts of the joined text decide.

    Per-unit counts (of a unit with its following separator, which captures most merges across
    the join) estimate the cut; the joined text is then counted to verify it, and the estimate
    steers the few corrections. Only verified fits are ever returned.
    """
    n = len(units)
    counts = _Counts(units, tokenizer)
    lo, hi = _steer(counts, budget)
    h = _close_gap(counts, budget, lo, hi)
    notes = drop_note(units, h, budget)
    if h == n:
        return LayerResult("", 0, n, n, [], notes=notes, drop_reason=REASON_HEAD)
    kept = [counts.render_at(i) for i in range(h, n)]
    text = UNIT_SEPARATOR.join(kept)
    tokens = counts.layer_tokens(h)
    return LayerResult(text, tokens, h, n, kept, notes=notes, drop_reason=REASON_HEAD)


class _Counts:
    """Memoised renderings and counts of one layer's units: a unit's estimate (its count with
    its following separator) and the verified count of the layer kept from unit ``h`` on."""

    __slots__ = ("count", "estimates", "n", "rendered", "totals", "units")

    def __init__(self, units: Sequence[Unit], tokenizer: Tokenizer) -> None:
        self.units = units
        self.n = len(units)
        self.count = tokenizer.count
        self.rendered: list[str | None] = [None] * self.n
        self.estimates: dict[int, int] = {}
        self.totals: dict[int, int] = {}

    def render_at(self, i: int) -> str:
        text = self.rendered[i]
        if text is None:
            text = self.rendered[i] = render(self.units[i])
        return text

    def estimate(self, i: int) -> int:
        if i not in self.estimates:
            text = self.render_at(i)
            self.estimates[i] = self.count(text if i == self.n - 1 else text + UNIT_SEPARATOR)
        return self.estimates[i]

    def layer_tokens(self, h: int) -> int:
        if h not in self.totals:
            joined = UNIT_SEPARATOR.join([self.render_at(i) for i in range(h, self.n)])
            self.totals[h] = self.count(joined)
        return self.totals[h]


def _steer(counts: _Counts, budget: int) -> tuple[int, int]:
    """Estimate the cut, then correct it by verified counts: ``(lo, hi)``, the largest head
    known not to fit (-1: none known) and the smallest known to fit (``n``: the empty layer)."""
    estimate, n = counts.estimate, counts.n
    h, acc = n, 0
    while h > 0 and acc + estimate(h - 1) <= budget:
        acc += estimate(h - 1)
        h -= 1
    lo = -1
    hi = n
    while True:
        tokens = counts.layer_tokens(h)
        if tokens <= budget:
            hi = h
            room, j = budget - tokens + _SLACK, h
            while j - 1 > lo and estimate(j - 1) <= room:
                room -= estimate(j - 1)
                j -= 1
            if j == h:
                break
        else:
            lo = h
            excess, j = tokens - budget, h
            while j < hi and excess > 0:
                excess -= estimate(j)
                j += 1
            if j >= hi:
                break
        h = j
    return lo, hi


def _close_gap(counts: _Counts, budget: int, lo: int, hi: int) -> int:
    """The smallest head that fits, from the bounds ``_steer`` left."""
    # Sub-additive counts (a joined text counting less than its parts) make the estimates
    # overshoot, so smaller h may never have been tried: nothing is discarded without a
    # verified count saying it must be. Try the next unit in; if it fits too, gallop.
    step = 1
    while lo < 0 and hi > 0:
        probe = max(hi - step, 0)
        if counts.layer_tokens(probe) <= budget:
            hi, step = probe, step * 2
        else:
            lo = probe
    # Close the remaining gap by bisection (fit is monotone in h for sane tokenizers).
    while hi - lo > 1 and lo >= 0:
        mid = (lo + hi) // 2
        if counts.layer_tokens(mid) <= budget:
            hi = mid
        else:
            lo = mid
    return hi
