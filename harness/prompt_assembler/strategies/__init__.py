"""The trimming strategies, one module each, found through the ``Strategy`` enum.

Each member of :class:`~harness.prompt_assembler.Strategy` names a module here
(``Strategy.TRUNCATE_TAIL`` is ``truncate_tail.py``) that defines::

    def trim(units, budget, tokenizer) -> LayerResult           # the general path (required)
    def trim_bytes(units, max_bytes, bytes_per_token, budget)    # byte-exact fast path (optional)

``trim`` must work with any :class:`~harness.Tokenizer` and may only return a layer whose
verified ``tokenizer.count(text) <= budget``; ``trim_bytes``, when a module defines it, is used
for tokenizers whose counts are exactly ``ceil(utf8 bytes / bytes_per_token)`` and must give
the same result as ``trim`` would. Adding a strategy is one file here and one enum member::

    from harness.prompt_assembler import Strategy
    from harness.prompt_assembler.strategies import implementation

    assert implementation(Strategy.KEEP_OR_DROP).trim_bytes is not None
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness._tokenizer import Tokenizer
from harness.prompt_assembler._values import Strategy, Unit
from harness.prompt_assembler.strategies.layer import LayerResult

__all__ = ["BytesTrim", "GeneralTrim", "LayerResult", "StrategyImpl", "implementation"]

GeneralTrim = Callable[[Sequence[Unit], int, Tokenizer], LayerResult]
BytesTrim = Callable[[Sequence[Unit], int, int, int], LayerResult]


@dataclass(frozen=True, slots=True)
class StrategyImpl:
    """A strategy's two paths; ``trim_bytes`` is None when it has no byte-exact fast path."""

    trim: GeneralTrim
    trim_bytes: BytesTrim | None


def _load(strategy: Strategy) -> StrategyImpl:
    module = importlib.import_module(f"{__name__}.{strategy.value}")
    return StrategyImpl(trim=module.trim, trim_bytes=getattr(module, "trim_bytes", None))


_REGISTRY: dict[Strategy, StrategyImpl] = {strategy: _load(strategy) for strategy in Strategy}


def implementation(strategy: Strategy) -> StrategyImpl:
    """The implementation of ``strategy``."""
    return _REGISTRY[strategy]
