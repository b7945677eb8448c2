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

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from harness.prompt_assembler.budgets import merge_budgets
from harness.prompt_assembler.prompt import AssembledPrompt, LayerTrim
from harness.prompt_assembler.strategies import LayerResult, implementation
from harness.prompt_assembler.strategies.layer import byte_exact
from harness.prompt_assembler.values import (
    DEFAULT_BUDGETS,
    DEFAULT_STRATEGIES,
    INSTRUCTION_LAYERS,
    LAYER_SEPARATOR,
    LAYERS,
    AssemblyError,
    AssemblyTypeError,
    LayerReport,
    Strategy,
    Unit,
    require_aware,
)
from harness.tokenizer import ApproximateTokenizer, Tokenizer, utf8_len

__all__ = ["assemble", "merge_strategies"]

_LAYER_NAMES = frozenset(LAYERS)
_NO_UNITS: tuple[tuple[Unit, ...], tuple[str, ...], bool] = ((), (), True)
_STR_UNITS: Mapping[str, Callable[[str], Unit]] = {
    name: functools.partial(Unit, name) for name in LAYERS
}
"""The unit of a ``str`` layer: id the layer name (``partial`` skips keyword parsing)."""
_EMPTY = LayerResult("", 0, 0, 0, [], nbytes=0)
"""What every strategy makes of a layer without units (shared: results are never mutated)."""

_unit_id_descriptor: Any = Unit.__dict__["id"]  # the slot's member descriptor
_UNIT_ID: Callable[[Unit], str] = _unit_id_descriptor.__get__
"""``unit.id`` that raises TypeError unless ``unit`` is a Unit (subclasses pass), at C speed."""
_unit_key_descriptor: Any = Unit.__dict__["_key"]
_UNIT_KEY: Callable[[Unit], str | None] = _unit_key_descriptor.__get__
"""``unit._key`` (its id when plain, else None), type-checked like ``_UNIT_ID``."""


def _normalise_layers(
    layers: Mapping[str, str | Unit | Sequence[Unit]],
) -> dict[str, tuple[tuple[Unit, ...], tuple[str, ...], bool]]:
    """Each layer as (units, their ids, whether all are plain), validated in as few passes
    over the units as possible.

    At hundreds of thousands of units every pass is memory-bound (the units outgrow the CPU
    caches), so one C-level pass reads and type-checks every unit's ``_key`` (its id when it
    is plain: trusted, no ``max_age``; else None) straight into a tuple, and one set build
    both checks for duplicates and says whether any unit needs screening. Only a layer with
    provenance to check (or a duplicate to name) takes a second pass, over the ids.
    """
    if not isinstance(layers, Mapping):
        raise AssemblyTypeError(
            f"layers must be a mapping of layer name to units, got {type(layers)}"
        )
    names = layers.keys()
    unknown = () if names <= _LAYER_NAMES else sorted(map(str, names - _LAYER_NAMES))
    if unknown:
        raise AssemblyError(f"unknown layer(s) {', '.join(map(repr, unknown))}; known: {LAYERS}")
    result: dict[str, tuple[tuple[Unit, ...], tuple[str, ...], bool]] = {}
    for name in LAYERS:
        value = layers.get(name)
        units: tuple[Unit, ...]
        if value is None:
            result[name] = _NO_UNITS
            continue
        if isinstance(value, str):
            units = (_STR_UNITS[name](value),)
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
            keys = tuple(map(_UNIT_KEY, units))
        except TypeError:
            for item in units:
                if not isinstance(item, Unit):
                    raise AssemblyTypeError(
                        f"layer {name!r}: expected Unit items, got {type(item).__name__}"
                    ) from None
            raise
        distinct = set(keys)
        plain = len(distinct) == len(keys) and None not in distinct
        if plain:
            ids = cast(tuple[str, ...], keys)
        else:  # some unit carries provenance to check, or two share an id
            ids = _distinct_ids(name, units)
            plain = None not in distinct
        result[name] = (units, ids, plain)
    return result


def _distinct_ids(name: str, units: tuple[Unit, ...]) -> tuple[str, ...]:
    """The units' ids; a duplicate raises ``AssemblyError`` naming it."""
    ids = tuple(map(_UNIT_ID, units))
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for unit_id in ids:
            if unit_id in seen:
                raise AssemblyError(f"layer {name!r}: duplicate unit id {unit_id!r}")
            seen.add(unit_id)
    return ids


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
    if byte_exact(checked) is None:
        empty = checked.count("")
        if empty != 0 or isinstance(empty, bool) or not isinstance(empty, int):
            # An empty layer must fit every budget, 0 included (invariant 1).
            raise AssemblyError(
                f"tokenizer {checked.name!r} counts the empty string as {empty!r}; a "
                "Tokenizer must count '' as 0 (count fixed per-prompt overhead outside it)"
            )
    return checked


_DEFAULT_TOKENIZER = ApproximateTokenizer()


def _check_now(now: object) -> datetime | None:
    if now is None:
        return None
    if not isinstance(now, datetime):
        raise AssemblyTypeError(f"now must be a datetime or None, got {type(now).__name__}")
    require_aware(now, "now")
    return now


def _few(ids: Sequence[str]) -> str:
    shown = ", ".join(map(repr, ids[:3]))
    return shown if len(ids) <= 3 else f"{shown} and {len(ids) - 3} more"


def _screen(
    name: str, units: tuple[Unit, ...], now: datetime | None
) -> tuple[tuple[Unit, ...], tuple[int, ...] | None, str | None]:
    """Refuse untrusted units in an instruction layer and drop stale ones (CONTRACT.md section
    10): (fresh units, their indexes when some were stale, the note saying so)."""
    if name in INSTRUCTION_LAYERS:
        for unit in units:
            if unit.trust != "trusted":
                raise AssemblyError(
                    f"layer {name!r}: unit {unit.id!r} is untrusted, and {name} is an instruction "
                    "layer (identity and instruction_files carry instruction authority); put "
                    "untrusted text in project_context, business_rules or task_state"
                )
    stale: list[str] = []
    positions: list[int] = []
    for index, unit in enumerate(units):
        max_age, observed = unit.max_age, unit.observed_at
        if max_age is not None and observed is not None:
            if now is None:
                raise AssemblyError(
                    f"layer {name!r}: unit {unit.id!r} has a max_age, so assemble needs the "
                    "time: pass now=datetime.now(timezone.utc)"
                )
            if (now - observed).total_seconds() > max_age:
                stale.append(unit.id)
                continue
        positions.append(index)
    if not stale:
        return units, None, None
    note = (
        f"dropped {len(stale)} stale unit(s) before trimming ({_few(stale)}): observed more "
        "than their max_age before now"
    )
    return tuple(units[i] for i in positions), tuple(positions), note


def _layer(
    name: str,
    units: tuple[Unit, ...],
    ids: tuple[str, ...],
    plain: bool,
    budget: int,
    strategy: Strategy,
    tok: Tokenizer,
    bpt: int | None,
    clock: datetime | None,
    estimated: bool,
) -> tuple[LayerReport, LayerTrim]:
    """One layer: screened (trust, freshness), trimmed by its strategy, and reported."""
    fresh, positions, stale_note = units, None, None
    if not plain:
        fresh, positions, stale_note = _screen(name, units, clock)
    if not fresh:
        result = _EMPTY
    elif bpt is not None and (fast := implementation(strategy).trim_bytes) is not None:
        result = fast(fresh, budget * bpt, bpt, budget)
    else:
        result = implementation(strategy).trim(fresh, budget, tok)
    start, stop = result.start, result.stop
    if positions is None:
        kept, dropped = ids[start:stop], ids[:start] + ids[stop:]
        notes = tuple(result.notes)
    else:
        kept_at = frozenset(positions[start:stop])
        kept = tuple(ids[i] for i in positions[start:stop])
        dropped = tuple(unit_id for i, unit_id in enumerate(ids) if i not in kept_at)
        notes = (stale_note, *result.notes) if stale_note else tuple(result.notes)
    # LayerReport(...) at a fraction of the cost: its frozen __init__ goes through
    # object.__setattr__ per field; one update of its __dict__ does the same (it validates
    # nothing, so nothing is skipped).
    report: LayerReport = object.__new__(LayerReport)
    report.__dict__.update(
        name=name,
        strategy=strategy,
        budget=budget,
        tokens=result.tokens,
        estimated=estimated,
        text=result.text,
        kept=kept,
        dropped=dropped,
        truncated=result.truncated,
        notes=notes,
    )
    return report, (units, fresh, positions, result)


def _new_prompt(
    text: str,
    reports: tuple[LayerReport, ...],
    tokens: int,
    estimated: bool,
    tok: Tokenizer,
    trims: tuple[LayerTrim, ...],
    clock: datetime | None,
) -> AssembledPrompt:
    """``AssembledPrompt(...)`` at a fraction of the cost: a frozen dataclass's ``__init__``
    goes through ``object.__setattr__`` per field; this one keeps a ``__dict__`` (for its
    cached properties), filled in one update. It validates nothing, so nothing is skipped."""
    prompt: AssembledPrompt = object.__new__(AssembledPrompt)
    prompt.__dict__.update(
        text=text,
        layers=reports,
        tokens=tokens,
        estimated=estimated,
        tokenizer_name=tok.name,
        _tokenizer=tok,
        _trims=trims,
        _now=clock,
    )
    return prompt


def assemble(
    layers: Mapping[str, str | Unit | Sequence[Unit]],
    *,
    budgets: Mapping[str, int] | None = None,
    strategies: Mapping[str, Strategy | str] | None = None,
    tokenizer: Tokenizer | None = None,
    now: datetime | None = None,
) -> AssembledPrompt:
    """Assemble the five layers into one prompt, each trimmed to its budget by its strategy.

    Pure and deterministic: the same inputs give byte-identical text, digest and manifest,
    whatever the order of ``layers``. Missing layers are empty; a ``str`` layer is one unit whose
    id is the layer name; ``budgets`` and ``strategies`` are partial and merge over the defaults.
    ``now`` (timezone-aware) is the clock for units with a ``max_age``: stale ones are dropped
    before trimming with the reason ``stale``. Untrusted units in ``identity`` or
    ``instruction_files`` raise ``ValueError``.
    """
    units_by_layer = _normalise_layers(layers)
    merged_budgets = merge_budgets(budgets) if budgets else DEFAULT_BUDGETS
    merged_strategies = merge_strategies(strategies)
    tok = _check_tokenizer(_DEFAULT_TOKENIZER if tokenizer is None else tokenizer)
    clock = _check_now(now)
    bpt = byte_exact(tok)
    estimated = bool(tok.estimated)

    reports: list[LayerReport] = []
    trims: list[LayerTrim] = []
    texts: list[str] = []
    total_bytes = 0
    for name in LAYERS:
        units, ids, plain = units_by_layer[name]
        report, trim = _layer(
            name,
            units,
            ids,
            plain,
            merged_budgets[name],
            merged_strategies[name],
            tok,
            bpt,
            clock,
            estimated,
        )
        result = trim[3]
        if result.text:
            texts.append(result.text)
            if bpt is not None:
                total_bytes += result.nbytes if result.nbytes >= 0 else utf8_len(result.text)
        reports.append(report)
        trims.append(trim)
    text = LAYER_SEPARATOR.join(texts)
    if bpt is not None:
        total_bytes += len(LAYER_SEPARATOR) * max(len(texts) - 1, 0)
        tokens = -(-total_bytes // bpt)
    else:
        tokens = tok.count(text)
    return _new_prompt(text, tuple(reports), tokens, estimated, tok, tuple(trims), clock)
