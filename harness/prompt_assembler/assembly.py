"""``assemble``: five ordered layers, each trimmed to its token budget by its strategy.

    from harness.prompt_assembler import Unit, assemble

    prompt = assemble(
        {
            "identity": "You are the reviewer.",
            "business_rules": [Unit("r1", "Refunds need approval."), Unit("r2", "Log decisions.")],
        },
        budgets={"business_rules": 8},
    )
    assert prompt.layer("business_rules").kept == ("r2",)
    assert prompt.tokens == len(prompt.text.encode()) // 4 + (len(prompt.text.encode()) % 4 > 0)

Design notes: pure and synchronous (no I/O, no event loop, no global state). With
:class:`ApproximateTokenizer` the strategies work on UTF-8 byte lengths, which are additive,
so every decision is exact and costs one length per unit examined (each strategy's optional
``trim_bytes``). With any other tokenizer counts are not assumed additive: the general
``trim`` verifies the final layer text with ``count``. The small-call fixed cost is kept low
on purpose (issue 18): a duck-typed tokenizer check instead of the runtime-checkable
protocol's ``isinstance``, and slotted reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from harness.prompt_assembler.budgets import merge_budgets
from harness.prompt_assembler.prompt import AssembledPrompt, Trim
from harness.prompt_assembler.strategies import LayerResult, implementation
from harness.prompt_assembler.values import (
    DEFAULT_BUDGETS,
    DEFAULT_STRATEGIES,
    LAYER_SEPARATOR,
    LAYERS,
    AssemblyError,
    AssemblyTypeError,
    LayerReport,
    Strategy,
    Unit,
)
from harness.tokenizer import ApproximateTokenizer, Tokenizer, utf8_len

__all__ = ["assemble", "merge_strategies"]

_LAYER_NAMES = frozenset(LAYERS)
_EMPTY = LayerResult("", 0, 0, 0, [], nbytes=0)
"""What every strategy makes of a layer without units (shared: results are never mutated)."""

_unit_id_descriptor: Any = Unit.__dict__["id"]  # the slot's member descriptor
_UNIT_ID: Callable[[Unit], str] = _unit_id_descriptor.__get__
"""``unit.id`` that raises TypeError unless ``unit`` is a Unit (subclasses pass), at C speed."""


def _normalise_layers(
    layers: Mapping[str, str | Unit | Sequence[Unit]],
) -> dict[str, tuple[tuple[Unit, ...], tuple[str, ...]]]:
    """Each layer as (units, their ids), validated in as few passes over the units as possible.

    At hundreds of thousands of units every pass is memory-bound (the units outgrow the CPU
    caches), so the ids are read and type-checked in one C-level pass straight into a tuple
    (no intermediate list to copy and free), and the duplicate check is one set build.
    """
    if not isinstance(layers, Mapping):
        raise AssemblyTypeError(
            f"layers must be a mapping of layer name to units, got {type(layers)}"
        )
    names = layers.keys()
    unknown = () if names <= _LAYER_NAMES else sorted(map(str, names - _LAYER_NAMES))
    if unknown:
        raise AssemblyError(f"unknown layer(s) {', '.join(map(repr, unknown))}; known: {LAYERS}")
    result: dict[str, tuple[tuple[Unit, ...], tuple[str, ...]]] = {}
    for name in LAYERS:
        value = layers.get(name)
        units: tuple[Unit, ...]
        if value is None:
            units = ()
        elif isinstance(value, str):
            units = (Unit(id=name, text=value),)
        elif isinstance(value, Unit):
            units = (value,)
        elif isinstance(value, Sequence):
            items = cast(Sequence[Unit], value)
            units = items if type(items) is tuple else tuple(items)
        else:
            raise AssemblyTypeError(
                f"layer {name!r}: expected a str, a Unit or a sequence of Units, "
                f"got {type(value).__name__}"
            )
        try:
            ids = tuple(map(_UNIT_ID, units))
        except TypeError:
            for item in units:
                if not isinstance(item, Unit):
                    raise AssemblyTypeError(
                        f"layer {name!r}: expected Unit items, got {type(item).__name__}"
                    ) from None
            raise
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            for unit_id in ids:
                if unit_id in seen:
                    raise AssemblyError(f"layer {name!r}: duplicate unit id {unit_id!r}")
                seen.add(unit_id)
        result[name] = (units, ids)
    return result


def merge_strategies(
    strategies: Mapping[str, Strategy | str] | None,
) -> Mapping[str, Strategy]:
    """``strategies`` (partial) over the defaults; unknown layers or names raise."""
    if not strategies:
        return DEFAULT_STRATEGIES
    merged = dict(DEFAULT_STRATEGIES)
    for name, strategy in strategies.items():
        if name not in LAYERS:
            raise AssemblyError(f"strategy for unknown layer {name!r}; known: {LAYERS}")
        try:
            merged[name] = Strategy(strategy)
        except ValueError:
            raise AssemblyError(
                f"unknown strategy {strategy!r} for layer {name!r}; "
                f"choose one of {', '.join(s.value for s in Strategy)}"
            ) from None
    return merged


def _check_tokenizer(tok: object) -> Tokenizer:
    """``tok`` if it has the Tokenizer members (what the runtime-checkable protocol checks,
    at a fraction of its cost), else TypeError; an empty text must count as 0."""
    if type(tok) is ApproximateTokenizer:
        return tok
    if not (
        hasattr(tok, "name")
        and hasattr(tok, "estimated")
        and callable(getattr(tok, "count", None))
        and callable(getattr(tok, "truncate", None))
    ):
        raise AssemblyTypeError(
            f"tokenizer must implement harness.Tokenizer, got {type(tok).__name__}"
        )
    checked = cast(Tokenizer, tok)
    if _byte_exact(checked) is None:
        empty = checked.count("")
        if empty != 0 or isinstance(empty, bool) or not isinstance(empty, int):
            # An empty layer must fit every budget, 0 included (invariant 1).
            raise AssemblyError(
                f"tokenizer {checked.name!r} counts the empty string as {empty!r}; a "
                "Tokenizer must count '' as 0 (count fixed per-prompt overhead outside it)"
            )
    return checked


def _byte_exact(tokenizer: Tokenizer) -> int | None:
    """bytes_per_token when counts are exactly ceil(bytes / bpt), else None."""
    cls = type(tokenizer)
    if cls is ApproximateTokenizer or (
        isinstance(tokenizer, ApproximateTokenizer)
        and cls.count is ApproximateTokenizer.count
        and cls.truncate is ApproximateTokenizer.truncate
    ):
        return cast(ApproximateTokenizer, tokenizer).bytes_per_token
    return None


_DEFAULT_TOKENIZER = ApproximateTokenizer()


def assemble(
    layers: Mapping[str, str | Unit | Sequence[Unit]],
    *,
    budgets: Mapping[str, int] | None = None,
    strategies: Mapping[str, Strategy | str] | None = None,
    tokenizer: Tokenizer | None = None,
) -> AssembledPrompt:
    """Assemble the five layers into one prompt, each trimmed to its budget by its strategy.

    Pure and deterministic: the same inputs give byte-identical text, digest and manifest,
    whatever the order of ``layers``. Missing layers are empty; a ``str`` layer is one unit whose
    id is the layer name; ``budgets`` and ``strategies`` are partial and merge over the defaults.
    """
    units_by_layer = _normalise_layers(layers)
    merged_budgets = merge_budgets(budgets) if budgets else DEFAULT_BUDGETS
    merged_strategies = merge_strategies(strategies)
    tok = _check_tokenizer(_DEFAULT_TOKENIZER if tokenizer is None else tokenizer)
    bpt = _byte_exact(tok)
    estimated = bool(tok.estimated)

    reports: list[LayerReport] = []
    trims: list[Trim] = []
    texts: list[str] = []
    total_bytes = 0
    for name in LAYERS:
        units, ids = units_by_layer[name]
        budget = merged_budgets[name]
        strategy = merged_strategies[name]
        if not units:
            result = _EMPTY
        elif bpt is not None and (fast := implementation(strategy).trim_bytes) is not None:
            result = fast(units, budget * bpt, bpt, budget)
        else:
            result = implementation(strategy).trim(units, budget, tok)
        if result.text:
            texts.append(result.text)
            if bpt is not None:
                total_bytes += result.nbytes if result.nbytes >= 0 else utf8_len(result.text)
        start, stop = result.start, result.stop
        reports.append(
            LayerReport(
                name,
                strategy,
                budget,
                result.tokens,
                estimated,
                result.text,
                ids[start:stop],
                ids[:start] + ids[stop:],
                result.truncated,
                tuple(result.notes),
            )
        )
        trims.append((units, result))
    text = LAYER_SEPARATOR.join(texts)
    if bpt is not None:
        total_bytes += len(LAYER_SEPARATOR) * max(len(texts) - 1, 0)
        tokens = -(-total_bytes // bpt)
    else:
        tokens = tok.count(text)
    return AssembledPrompt(
        text=text,
        layers=tuple(reports),
        tokens=tokens,
        estimated=estimated,
        tokenizer_name=tok.name,
        _tokenizer=tok,
        _trims=tuple(trims),
    )
