"""``keep_or_drop``: the whole layer is kept, or it is empty (half an identity is useless).

Nothing is ever cut, so the layer's count is one ``count`` of its whole rendering::

    from harness.prompt_assembler import assemble

    prompt = assemble({"identity": "You are the reviewer."}, budgets={"identity": 2})
    assert prompt.layer("identity").text == ""
"""

from __future__ import annotations

from collections.abc import Sequence

from harness._tokenizer import Tokenizer, utf8_len
from harness.prompt_assembler._render import render
from harness.prompt_assembler._values import UNIT_SEPARATOR, Unit
from harness.prompt_assembler.strategies.layer import REASON_LAYER, LayerResult, empty

__all__ = ["trim", "trim_bytes"]


def _dropped(n: int, tokens: int, budget: int) -> LayerResult:
    note = f"layer needs {tokens} tokens, over its budget of {budget}; dropped whole"
    return empty(n, note, REASON_LAYER)


def trim_bytes(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> LayerResult:
    """The byte-exact path (counts are ceil(bytes / bpt))."""
    rendered = [render(unit) for unit in units]
    text = UNIT_SEPARATOR.join(rendered)
    nbytes = utf8_len(text)
    n = len(units)
    if nbytes <= max_bytes:
        return LayerResult(text, -(-nbytes // bpt), 0, n, rendered, nbytes=nbytes)
    return _dropped(n, -(-nbytes // bpt), budget)


def trim(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> LayerResult:
    """The general path: one count of the whole layer."""
    rendered = [render(unit) for unit in units]
    text = UNIT_SEPARATOR.join(rendered)
    tokens = tokenizer.count(text)
    n = len(units)
    if tokens <= budget:
        return LayerResult(text, tokens, 0, n, rendered)
    return _dropped(n, tokens, budget)
