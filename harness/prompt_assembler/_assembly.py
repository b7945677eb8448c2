"""``assemble``: the layers of a layout, in order, each trimmed to its budget by its strategy.

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

Pure and synchronous: no I/O, no event loop, and nothing kept between calls unless a caller
passes its own :class:`~harness.prompt_assembler.AssemblyCache`.
"""

# With ApproximateTokenizer the strategies work on UTF-8 byte lengths, which are additive, so
# every decision is exact and costs one length per unit examined (each strategy's optional
# ``trim_bytes``). With any other tokenizer counts are not assumed additive: the general
# ``trim`` verifies the final layer text with ``count``. The tokenizer check is duck-typed (what
# the runtime-checkable protocol checks, at a fraction of its cost): small calls are frequent.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import islice
from operator import attrgetter, countOf
from operator import lt as _lt
from typing import cast

from harness._tokenizer import ApproximateTokenizer, Tokenizer, utf8_len
from harness.prompt_assembler._allocation import Allocation, Ledger, check_allocation
from harness.prompt_assembler._budgets import merge_budgets
from harness.prompt_assembler._cache import AssemblyCache
from harness.prompt_assembler._layout import (
    DEFAULT_LAYOUT,
    LayerSpec,
    Layout,
    check_layout,
    layout_budgets,
    layout_names,
    layout_strategies,
)
from harness.prompt_assembler._prompt import AssembledPrompt, LayerTrim, new_prompt
from harness.prompt_assembler._values import (
    LAYER_SEPARATOR,
    LAYERS,
    AssemblyError,
    AssemblyTypeError,
    LayerReport,
    Strategy,
    Unit,
    new_report,
    require_aware,
)
from harness.prompt_assembler.strategies import LayerResult, implementation
from harness.prompt_assembler.strategies.layer import byte_exact

__all__ = ["assemble", "merge_strategies"]

_NO_UNITS: tuple[tuple[Unit, ...], tuple[str, ...], bool] = ((), (), True)
_EMPTY = LayerResult("", 0, 0, 0, [], nbytes=0)
"""What every strategy makes of a layer without units (shared: results are never mutated)."""
_DEFAULT_NAMES = frozenset(LAYERS)
_TRUSTED = frozenset({"trusted"})
_trust = attrgetter("trust")
_SORTED_CHECK_FROM = 256
"""Fewer ids than this go straight to the set: it is cheap while its table is small, and a
small call (``benchmarks/assemble.py``, row 0) should not pay for the extra passes."""


def _units(name: str, value: object) -> tuple[Unit, ...]:
    """A layer's value as a tuple (a ``str`` is one unit whose id is the layer name); the
    items are checked by ``_scan``."""
    if isinstance(value, str):
        return (Unit(name, value),)
    if isinstance(value, Unit):
        return (value,)
    if not isinstance(value, Sequence):
        raise AssemblyTypeError(
            f"layer {name!r}: expected a str, a Unit or a sequence of Units, "
            f"got {type(value).__name__}"
        )
    return cast(tuple[Unit, ...], value if type(value) is tuple else tuple(value))


def _scan(spec: LayerSpec, units: tuple[Unit, ...]) -> tuple[tuple[str, ...], bool]:
    """The units' ids, and whether none needs screening (no ``max_age``; in an instruction
    layer, all trusted); a non-Unit item or a duplicate id raises naming it."""
    # One loop for every per-unit check: at hundreds of thousands of units each pass over the
    # units is memory-bound, so one Python pass beats several C-level ones (map, set).
    ids: list[str] = []
    append, unit_type, type_of = ids.append, Unit, type
    aged = False
    for unit in units:
        if type_of(unit) is not unit_type and not isinstance(unit, unit_type):
            raise AssemblyTypeError(
                f"layer {spec.name!r}: expected Unit items, got {type(unit).__name__}"
            )
        append(unit.id)
        if unit.max_age is not None:
            aged = True
    if not (len(ids) >= _SORTED_CHECK_FROM and _increasing(ids)) and len(set(ids)) != len(ids):
        _raise_duplicate(spec.name, ids)
    plain = not aged
    if plain and spec.authority == "instruction":
        plain = set(map(_trust, units)) <= _TRUSTED
    return tuple(ids), plain


def _increasing(ids: list[str]) -> bool:
    """Whether ``ids`` are all exact ``str`` in strictly increasing order, so all distinct."""
    # Ids often come sorted (paths, counters, timestamps): one C-level pass of neighbour
    # comparisons then replaces the set, whose table outgrows the caches at tens of thousands
    # of ids. Unsorted ids stop it at the first pair out of order. Exact ``str`` only: a
    # subclass may order its values as it likes, and then the set decides.
    return all(map(_lt, ids, islice(ids, 1, None))) and countOf(map(type, ids), str) == len(ids)


def _raise_duplicate(name: str, ids: Sequence[str]) -> None:
    seen: set[str] = set()
    for unit_id in ids:
        if unit_id in seen:
            raise AssemblyError(f"layer {name!r}: duplicate unit id {unit_id!r}")
        seen.add(unit_id)


def _normalise_layers(
    layers: Mapping[str, str | Unit | Sequence[Unit]], layout: Layout, names: tuple[str, ...]
) -> dict[str, tuple[tuple[Unit, ...], tuple[str, ...], bool]]:
    """Each layer of the layout as (units, their ids, whether none needs screening: no
    ``max_age``, and in an instruction layer all trusted), validated."""
    if not isinstance(layers, Mapping):
        raise AssemblyTypeError(
            f"layers must be a mapping of layer name to units, got {type(layers)}"
        )
    known = _DEFAULT_NAMES if names is LAYERS else frozenset(names)
    unknown = () if layers.keys() <= known else sorted(map(str, layers.keys() - known))
    if unknown:
        raise AssemblyError(
            f"unknown layer(s) {', '.join(map(repr, unknown))}; the layout's layers: {names} "
            "(use EXTENDED_LAYOUT, or add the layer to the layout)"
        )
    result: dict[str, tuple[tuple[Unit, ...], tuple[str, ...], bool]] = {}
    for spec in layout:
        value = layers.get(spec.name)
        if value is None:
            result[spec.name] = _NO_UNITS
            continue
        units = _units(spec.name, value)
        result[spec.name] = (units, *_scan(spec, units))
    return result


def merge_strategies(
    strategies: Mapping[str, Strategy | str] | None, *, layout: Layout = DEFAULT_LAYOUT
) -> Mapping[str, Strategy]:
    """``strategies`` (partial) over the layout's; unknown layers or names raise."""
    defaults = layout_strategies(layout)
    if not strategies:
        return defaults
    merged = dict(defaults)
    for name, strategy in strategies.items():
        if name not in merged:
            known = layout_names(layout)
            raise AssemblyError(
                f"strategy for unknown layer {name!r}; the layout's layers: {known}"
            )
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
            # An empty layer must fit every budget, 0 included: a layer never exceeds its budget.
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
    spec: LayerSpec, units: tuple[Unit, ...], now: datetime | None
) -> tuple[tuple[Unit, ...], tuple[int, ...] | None, str | None]:
    """Refuse untrusted units in an instruction layer and drop units older than their
    ``max_age``: (fresh units, their indexes when some were stale, the note saying so)."""
    name = spec.name
    if spec.authority == "instruction":
        for unit in units:
            if unit.trust != "trusted":
                raise AssemblyError(
                    f"layer {name!r}: unit {unit.id!r} is untrusted, and {name} is an instruction "
                    "layer (its text carries instruction authority); put untrusted text in an "
                    "information layer such as project_context, business_rules or task_state"
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
    spec: LayerSpec,
    units: tuple[Unit, ...],
    ids: tuple[str, ...],
    plain: bool,
    budget: int,
    offered: int,
    strategy: Strategy,
    tok: Tokenizer,
    bpt: int | None,
    clock: datetime | None,
    estimated: bool,
) -> tuple[LayerReport, LayerTrim]:
    """One layer: screened (trust, freshness), trimmed by its strategy to ``budget`` plus
    what it is ``offered`` to borrow, and reported against ``budget``."""
    room = budget + offered
    fresh, positions, stale_note = units, None, None
    if not plain:
        fresh, positions, stale_note = _screen(spec, units, clock)
    if not fresh:
        result = _EMPTY
    elif bpt is not None and (fast := implementation(strategy).trim_bytes) is not None:
        result = fast(fresh, room * bpt, bpt, room)
    else:
        result = implementation(strategy).trim(fresh, room, tok)
    if positions is None and result.kept_at is None:  # the common case: one run kept
        start, stop = result.start, result.stop
        kept = ids[start:stop]
        dropped = ids[:start] if stop == len(ids) else ids[:start] + ids[stop:]
        notes = tuple(result.notes)
    else:
        at: Sequence[int] = result.kept_indexes()
        if positions is not None:
            at = [positions[i] for i in at]
        kept, dropped = tuple([ids[i] for i in at]), _others(ids, at)
        notes = (stale_note, *result.notes) if stale_note else tuple(result.notes)
    report = new_report(
        spec.name,
        strategy,
        budget,
        result.tokens,
        estimated,
        result.text,
        kept,
        dropped,
        result.truncated,
        notes,
        0,
        0,
    )
    return report, (units, fresh, positions, result)


def _others(ids: tuple[str, ...], kept_at: Sequence[int]) -> tuple[str, ...]:
    """The ids not at ``kept_at``, in order."""
    kept = frozenset(kept_at)
    return tuple([unit_id for i, unit_id in enumerate(ids) if i not in kept])


def assemble(
    layers: Mapping[str, str | Unit | Sequence[Unit]],
    *,
    layout: Layout = DEFAULT_LAYOUT,
    budgets: Mapping[str, int] | None = None,
    strategies: Mapping[str, Strategy | str] | None = None,
    tokenizer: Tokenizer | None = None,
    now: datetime | None = None,
    cache: AssemblyCache | None = None,
    allocation: Allocation = "fixed",
) -> AssembledPrompt:
    """Assemble the layers of ``layout`` into one prompt, each trimmed to its budget by its
    strategy, in layout order.

    Pure and deterministic: the same inputs give byte-identical text, digest and manifest,
    whatever the order of ``layers``. Missing layers are empty; a ``str`` layer is one unit whose
    id is the layer name; ``budgets`` and ``strategies`` are partial and merge over the
    layout's. A layer name not in the layout raises ``ValueError`` naming the layout's layers.
    ``now`` (timezone-aware) is the clock for units with a ``max_age``: stale ones are dropped
    before trimming with the reason ``stale``. Untrusted units in an instruction layer
    (``identity``, ``instruction_files``) raise ``ValueError``. ``cache``: memos shared with
    other builds of the same owner (digests, layer manifests); without one nothing is kept.
    ``allocation="ceilings"``: budgets are ceilings, and the tokens a layer leaves unused are
    lent to the next information layer that needs them (``LayerReport.lent``/``borrowed``,
    the manifest's ``loans``); ``"fixed"`` keeps every layer to its own budget.
    """
    layout = check_layout(layout)
    names = layout_names(layout)
    units_by_layer = _normalise_layers(layers, layout, names)
    merged_budgets = merge_budgets(budgets, layout=layout) if budgets else layout_budgets(layout)
    merged_strategies = merge_strategies(strategies, layout=layout)
    tok = _check_tokenizer(_DEFAULT_TOKENIZER if tokenizer is None else tokenizer)
    clock = _check_now(now)
    if cache is not None and not isinstance(cache, AssemblyCache):
        raise AssemblyTypeError(f"cache must be an AssemblyCache, got {type(cache).__name__}")
    bpt = byte_exact(tok)
    estimated = bool(tok.estimated)
    ledger = Ledger() if check_allocation(allocation) == "ceilings" else None

    reports: list[LayerReport] = []
    trims: list[LayerTrim] = []
    texts: list[str] = []
    total_bytes = 0
    for spec in layout:
        name = spec.name
        units, ids, plain = units_by_layer[name]
        ceiling = merged_budgets[name]
        offered = 0 if ledger is None else ledger.offer(spec)
        report, trim = _layer(
            spec,
            units,
            ids,
            plain,
            ceiling,
            offered,
            merged_strategies[name],
            tok,
            bpt,
            clock,
            estimated,
        )
        if ledger is not None:
            report = ledger.settle(spec, ceiling, offered, report)
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
    trimmed = tuple(trims)
    if ledger is not None:
        reports, loans = ledger.lent(reports), tuple(ledger.loans)
    else:
        loans = ()
    return new_prompt(
        text,
        tuple(reports),
        tokens,
        estimated,
        tok.name,
        tok,
        trimmed,
        clock,
        layout,
        cache,
        None,
        None,
        loans,
    )
