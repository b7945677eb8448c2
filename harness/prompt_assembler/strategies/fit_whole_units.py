"""``fit_whole_units``: whole units kept from the most authoritative (the last) down, each one
that fits in what the units kept so far leave of the budget.

Units are never split and kept units stay in input order, so one unit too big for the budget
no longer takes the smaller, less authoritative ones with it::

    from harness.prompt_assembler import Strategy, Unit, assemble

    files = [Unit("root", "r" * 8_000), Unit("deep", "d" * 20_000)]  # 2k and 5k tokens
    prompt = assemble(
        {"instruction_files": files},
        budgets={"instruction_files": 4_000},
        strategies={"instruction_files": Strategy.FIT_WHOLE_UNITS},
    )
    assert prompt.layer("instruction_files").kept == ("root",)

Every dropped unit is recorded with the reason ``budget``.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness._tokenizer import Tokenizer, utf8_len
from harness.prompt_assembler._render import render
from harness.prompt_assembler._values import UNIT_SEPARATOR, Unit
from harness.prompt_assembler.strategies.layer import REASON_BUDGET, LayerResult, bare_texts

__all__ = ["trim", "trim_bytes"]


def _result(
    units: Sequence[Unit], kept_at: list[int], rendered: list[str], tokens: int, budget: int
) -> LayerResult:
    """The layer of the units at ``kept_at`` (found from the last, so in reverse order)."""
    kept_at.reverse()
    rendered.reverse()
    n = len(units)
    if kept_at and kept_at[-1] - kept_at[0] == len(kept_at) - 1:  # one run: start:stop says it
        start, stop, at = kept_at[0], kept_at[-1] + 1, None
    else:
        start, stop, at = 0, n, tuple(kept_at)
    return LayerResult(
        UNIT_SEPARATOR.join(rendered),
        tokens,
        start,
        stop,
        rendered,
        notes=_notes(units, kept_at, budget),
        drop_reason=REASON_BUDGET,
        kept_at=at,
    )


def _notes(units: Sequence[Unit], kept_at: list[int], budget: int) -> list[str]:
    n, dropped = len(units), len(units) - len(kept_at)
    if not dropped:
        return []
    kept = set(kept_at)
    first = [units[i].id for i in range(n) if i not in kept][:3]
    shown = ", ".join(map(repr, first)) + (" .." if dropped > 3 else "")
    return [
        f"dropped {dropped} of {n} units ({shown}) that did not fit in what the more "
        f"authoritative units left of the budget of {budget}; units are never split"
    ]


def trim_bytes(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> LayerResult:
    """The byte-exact path (counts are ceil(bytes / bpt), so sizes add up exactly)."""
    # Bare texts first: a kept text without "<" is its own rendering, and a unit whose bare
    # text does not fit cannot fit rendered (neutralising only adds), so the decisions hold.
    texts = bare_texts(units)
    if texts is not None:
        result = _fit_bytes(units, texts, max_bytes, bpt, budget)
        if "<" not in result.text:
            return result
    return _fit_bytes(units, [render(unit) for unit in units], max_bytes, bpt, budget)


def _fit_bytes(
    units: Sequence[Unit], texts: list[str], max_bytes: int, bpt: int, budget: int
) -> LayerResult:
    """``trim_bytes`` on the units rendered as ``texts``."""
    sep_len = len(UNIT_SEPARATOR)
    limit = max_bytes + sep_len  # n units carry n - 1 separators: credit one back
    if all(map(str.isascii, texts)):  # the common case, in C: does everything fit?
        total = sum(map(len, texts)) + sep_len * len(texts)
        if total <= limit:  # then each unit fits beside the others: all are kept
            return _fit_all(units, texts, max(total - sep_len, 0), bpt)
    total = 0
    kept_at: list[int] = []
    rendered: list[str] = []
    for index in range(len(texts) - 1, -1, -1):
        text = texts[index]
        size = (len(text) if text.isascii() else utf8_len(text)) + sep_len
        if total + size <= limit:
            total += size
            kept_at.append(index)
            rendered.append(text)
    nbytes = total - sep_len if kept_at else 0
    result = _result(units, kept_at, rendered, -(-nbytes // bpt), budget)
    result.nbytes = nbytes
    return result


def _fit_all(units: Sequence[Unit], texts: list[str], nbytes: int, bpt: int) -> LayerResult:
    """Every unit kept: what ``_fit_bytes`` gives when the whole layer fits."""
    n = len(units)
    return LayerResult(
        UNIT_SEPARATOR.join(texts),
        -(-nbytes // bpt),
        0,
        n,
        texts,
        nbytes=nbytes,
        drop_reason=REASON_BUDGET,
    )


def trim(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> LayerResult:
    """The general path: a unit is kept when the verified count of the kept units' joined
    text with it stays within the budget (counts need not add up)."""
    count = tokenizer.count
    kept_at: list[int] = []
    rendered: list[str] = []
    tokens = 0
    for index in range(len(units) - 1, -1, -1):
        text = render(units[index])
        if count(text) > budget:
            continue  # too big alone: no need to count it with the others
        candidate = UNIT_SEPARATOR.join([text, *reversed(rendered)])
        with_it = count(candidate)
        if with_it <= budget:
            kept_at.append(index)
            rendered.append(text)
            tokens = with_it
    return _result(units, kept_at, rendered, tokens, budget)
