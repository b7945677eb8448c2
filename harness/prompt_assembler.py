"""The pure prompt assembler of ADR 0006: five ordered layers, each trimmed to its token budget.

``assemble`` is a pure, synchronous function of its arguments: no I/O, no event loop, no global
state. Every trimming decision is deterministic and reported (which units were kept, dropped or
cut, and why), so a prompt can be explained and reproduced byte for byte from its manifest.

Design notes:
- Unit text is neutralised so it can never open or close an attribution block: any ``<`` that
  starts ``[\\]*[/]context`` (any letter case) gets one more backslash after it (``</context>``
  becomes ``<\\/context>``). The escaping is visible and reversible (:func:`restore_unit_text`).
- With :class:`ApproximateTokenizer` the assembler works on UTF-8 byte lengths, which are
  additive, so every decision is exact and costs one length per unit actually examined.
- With any other tokenizer, counts are not assumed additive: per-unit counts only estimate the
  cut, and the final layer text is always verified with one ``count`` and adjusted.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from types import MappingProxyType
from typing import Any, cast

from harness.tokenizer import ApproximateTokenizer, Tokenizer, utf8_len, utf8_prefix

__all__ = [
    "DEFAULT_BUDGETS",
    "DEFAULT_STRATEGIES",
    "LAYERS",
    "LAYER_SEPARATOR",
    "TRUNCATION_MARKER",
    "UNIT_SEPARATOR",
    "AssembledPrompt",
    "LayerReport",
    "Strategy",
    "Unit",
    "assemble",
    "merge_budgets",
    "neutralise_unit_text",
    "restore_unit_text",
]

LAYERS: tuple[str, ...] = (
    "identity",
    "instruction_files",
    "project_context",
    "business_rules",
    "task_state",
)


class Strategy(StrEnum):
    """How a layer is trimmed when it does not fit its budget."""

    DROP_WHOLE_UNITS = "drop_whole_units"
    TRUNCATE_TAIL = "truncate_tail"
    KEEP_OR_DROP = "keep_or_drop"


DEFAULT_STRATEGIES: Mapping[str, Strategy] = MappingProxyType(
    {
        "identity": Strategy.KEEP_OR_DROP,  # half an identity is useless
        "instruction_files": Strategy.DROP_WHOLE_UNITS,  # least authoritative discarded first
        "project_context": Strategy.TRUNCATE_TAIL,  # a blob: keep its head
        "business_rules": Strategy.DROP_WHOLE_UNITS,  # oldest rule discarded first
        "task_state": Strategy.DROP_WHOLE_UNITS,  # oldest state discarded first
    }
)

DEFAULT_BUDGETS: Mapping[str, int] = MappingProxyType(
    {
        "identity": 500,
        "instruction_files": 4000,
        "project_context": 4000,
        "business_rules": 2000,
        "task_state": 2000,
    }
)

LAYER_SEPARATOR = "\n\n"
"""Joins the non-empty layer texts into the prompt."""
UNIT_SEPARATOR = "\n\n"
"""Joins the rendered units of one layer."""
TRUNCATION_MARKER = "\n[… truncated …]"
"""Follows the cut text of a ``truncate_tail`` layer (inside the unit's block, if it has one)."""

_CLOSE_TAG = "\n</context>"

_FORGERY = re.compile(r"<(\\*/?context)", re.IGNORECASE)
_ESCAPED = re.compile(r"<\\(\\*/?context)", re.IGNORECASE)
_ATTR_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&#x27;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#9;",
    }
)


def neutralise_unit_text(text: str) -> str:
    """Escape anything in ``text`` that could open or close an attribution block.

    Every ``<`` followed by backslashes, an optional ``/`` and ``context`` (any case) gets one
    extra backslash, so neither ``<context`` nor ``</context`` survives, and no prefix of the
    result (as left by truncation) can form them either.
    """
    if "<" not in text:
        return text
    return _FORGERY.sub(r"<\\\1", text)


def restore_unit_text(text: str) -> str:
    """Undo :func:`neutralise_unit_text` (it is a bijection on strings)."""
    return _ESCAPED.sub(r"<\1", text)


def _open_tag(source: str) -> str:
    return f'<context path="{source.translate(_ATTR_ESCAPES)}">\n'


@dataclass(frozen=True, slots=True)
class Unit:
    """One indivisible piece of a layer; ``source`` (e.g. a file path) adds attribution."""

    id: str
    text: str
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise TypeError(f"Unit.id must be a str, got {type(self.id).__name__}")
        if not isinstance(self.text, str):
            raise TypeError(f"Unit {self.id!r}: text must be a str, got {type(self.text).__name__}")
        if self.source is not None and not isinstance(self.source, str):
            raise TypeError(
                f"Unit {self.id!r}: source must be a str or None, got {type(self.source).__name__}"
            )


@dataclass(frozen=True)
class LayerReport:
    """What one layer became: its text, its count against its budget, and every unit's fate.

    ``notes`` says in words what was dropped or cut and why; it is empty when everything fit.
    """

    name: str
    strategy: Strategy
    budget: int
    tokens: int
    estimated: bool
    text: str
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    truncated: bool
    notes: tuple[str, ...] = ()
    # For the lazy manifest: all the layer's units (kept ones are _units[_start:_stop]) and the
    # rendering of the cut unit as it appears in ``text``.
    _units: tuple[Unit, ...] = field(default=(), repr=False, compare=False)
    _start: int = field(default=0, repr=False, compare=False)
    _stop: int = field(default=0, repr=False, compare=False)
    _cut: str | None = field(default=None, repr=False, compare=False)
    _drop_reason: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class AssembledPrompt:
    """The assembled prompt, its per-layer reports, and a reproducible manifest."""

    text: str
    layers: tuple[LayerReport, ...]
    tokens: int
    estimated: bool
    tokenizer_name: str
    _tokenizer: Tokenizer = field(repr=False, compare=False, kw_only=True)
    manifest_id: str | None = field(default=None, kw_only=True)  # set by a recording Harness

    @cached_property
    def digest(self) -> str:
        """sha256 hex of ``text`` encoded as UTF-8 (computed on first access, then reused)."""
        return _sha256(self.text)

    @cached_property
    def _manifest_json(self) -> str:
        return json.dumps(self._build_manifest(), ensure_ascii=False, sort_keys=True)

    def layer(self, name: str) -> LayerReport:
        """The report of layer ``name``."""
        for report in self.layers:
            if report.name == name:
                return report
        raise KeyError(f"unknown layer {name!r}; layers are {', '.join(LAYERS)}")

    def manifest(self) -> dict[str, Any]:
        """A JSON-serialisable record of the assembly (computed on first call, then reused).

        Holds the digest, token total, tokenizer, separators and marker, and per layer its
        strategy, budget, tokens, kept/dropped ids, truncation, notes, and per kept unit its id,
        source, sha256 of its text and the token count of its rendering as it appears.
        """
        result: dict[str, Any] = json.loads(self._manifest_json)
        return result

    def _build_manifest(self) -> dict[str, Any]:
        count = self._tokenizer.count
        layers = []
        for report in self.layers:
            units = []
            kept_units = report._units[report._start : report._stop]
            for index, unit in enumerate(kept_units):
                cut = report._cut is not None and index == len(kept_units) - 1
                rendered = report._cut if cut and report._cut is not None else _render(unit)
                entry: dict[str, Any] = {
                    "id": unit.id,
                    "source": unit.source,
                    "sha256": _sha256(unit.text),
                    "tokens": count(rendered),
                    "truncated": cut,
                }
                if cut:
                    entry["kept_chars"] = _kept_chars(unit, rendered)
                units.append(entry)
            dropped_units = (*report._units[: report._start], *report._units[report._stop :])
            layers.append(
                {
                    "name": report.name,
                    "strategy": str(report.strategy),
                    "budget": report.budget,
                    "tokens": report.tokens,
                    "estimated": report.estimated,
                    "truncated": report.truncated,
                    "kept": list(report.kept),
                    "dropped": list(report.dropped),
                    "notes": list(report.notes),
                    "units": units,
                    "dropped_units": [
                        {
                            "id": unit.id,
                            "source": unit.source,
                            "sha256": _sha256(unit.text),
                            "reason": report._drop_reason,
                        }
                        for unit in dropped_units
                    ],
                }
            )
        return {
            "manifest_version": 1,
            "digest": self.digest,
            "tokens": self.tokens,
            "estimated": self.estimated,
            "tokenizer": self.tokenizer_name,
            "layer_order": list(LAYERS),
            "layer_separator": LAYER_SEPARATOR,
            "unit_separator": UNIT_SEPARATOR,
            "truncation_marker": TRUNCATION_MARKER,
            "layers": layers,
        }


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _kept_chars(unit: Unit, rendered: str) -> int:
    """How many characters of the unit's (neutralised) text survived the cut."""
    body = rendered.removesuffix(_CLOSE_TAG) if unit.source is not None else rendered
    body = body.removesuffix(TRUNCATION_MARKER)
    if unit.source is not None:
        body = body[len(_open_tag(unit.source)) :]
    return len(body)


# --------------------------------------------------------------------------------------------
# Input validation


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
        raise TypeError(f"layers must be a mapping of layer name to units, got {type(layers)}")
    unknown = sorted(str(name) for name in layers if name not in LAYERS)
    if unknown:
        raise ValueError(f"unknown layer(s) {', '.join(map(repr, unknown))}; known: {LAYERS}")
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
            raise TypeError(
                f"layer {name!r}: expected a str, a Unit or a sequence of Units, "
                f"got {type(value).__name__}"
            )
        try:
            ids = tuple(map(_UNIT_ID, units))
        except TypeError:
            for item in units:
                if not isinstance(item, Unit):
                    raise TypeError(
                        f"layer {name!r}: expected Unit items, got {type(item).__name__}"
                    ) from None
            raise
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            for unit_id in ids:
                if unit_id in seen:
                    raise ValueError(f"layer {name!r}: duplicate unit id {unit_id!r}")
                seen.add(unit_id)
        result[name] = (units, ids)
    return result


def merge_budgets(
    budgets: Mapping[str, int] | None, base: Mapping[str, int] = DEFAULT_BUDGETS
) -> dict[str, int]:
    """``budgets`` (partial) over ``base``; unknown layers and bad values raise ``ValueError``."""
    merged = dict(base)
    for name, budget in (budgets or {}).items():
        if name not in LAYERS:
            raise ValueError(f"budget for unknown layer {name!r}; known: {LAYERS}")
        if isinstance(budget, bool) or not isinstance(budget, int):
            raise ValueError(f"budget for layer {name!r} must be an int, got {budget!r}")
        if budget < 0:
            raise ValueError(f"budget for layer {name!r} must be >= 0, got {budget}")
        merged[name] = budget
    return merged


def _merge_strategies(strategies: Mapping[str, Strategy | str] | None) -> dict[str, Strategy]:
    merged = dict(DEFAULT_STRATEGIES)
    for name, strategy in (strategies or {}).items():
        if name not in LAYERS:
            raise ValueError(f"strategy for unknown layer {name!r}; known: {LAYERS}")
        try:
            merged[name] = Strategy(strategy)
        except ValueError:
            raise ValueError(
                f"unknown strategy {strategy!r} for layer {name!r}; "
                f"choose one of {', '.join(s.value for s in Strategy)}"
            ) from None
    return merged


# --------------------------------------------------------------------------------------------
# Layer results


@dataclass(slots=True)
class _Layer:
    text: str
    tokens: int
    start: int  # kept units are units[start:stop]: always one contiguous run
    stop: int
    rendered: list[str]
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    nbytes: int = -1  # UTF-8 length, when the byte path computed it
    drop_reason: str = ""  # why the dropped units are absent, for the manifest


def _render(unit: Unit) -> str:
    return "".join(_parts(unit))


def _parts(unit: Unit) -> tuple[str, str, str]:
    """(opening tag, neutralised text, closing tag); tags are empty without a source."""
    text = neutralise_unit_text(unit.text)
    if unit.source is None:
        return "", text, ""
    return _open_tag(unit.source), text, _CLOSE_TAG


def _empty(n: int, tokens: int, note: str, reason: str) -> _Layer:
    return _Layer("", tokens, n, n, [], notes=[note], nbytes=0, drop_reason=reason)


_REASON_HEAD = "discarded from the head until the rest fit the budget"
_REASON_AFTER_CUT = "after the truncation point"
_REASON_NO_MARKER = "not even the truncation marker fits the budget"
_REASON_LAYER = "the whole layer is over its budget (keep_or_drop)"
_REASON_NO_ROOM = "not one character of the first unit fits beside the truncation marker"


def _ids(units: Sequence[Unit], start: int, stop: int) -> str:
    """The ids of ``units[start:stop]`` for a note, without copying a possibly huge slice."""
    if stop - start <= 3:
        return ", ".join(repr(units[i].id) for i in range(start, stop))
    return f"{units[start].id!r} .. {units[stop - 1].id!r}"


def _drop_note(units: Sequence[Unit], h: int, budget: int) -> list[str]:
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
        f"discarded {h} of {n} units from the head ({_ids(units, 0, h)}) to fit the budget "
        f"of {budget}; units are never split"
    ]


def _no_room_note(units: Sequence[Unit], n: int, budget: int) -> str:
    return (
        f"not one character of unit {units[0].id!r} fits beside the truncation marker within "
        f"the budget of {budget}; all {n} units dropped"
    )


def _truncate_note(units: Sequence[Unit], cut: int, budget: int, whole_text: bool) -> list[str]:
    unit = units[cut]
    how = "kept whole before the marker" if whole_text else "cut"
    note = f"layer over its budget of {budget}: truncated at unit {unit.id!r} ({how})"
    later = len(units) - cut - 1
    if later:
        note += f"; {later} later unit(s) dropped ({_ids(units, cut + 1, len(units))})"
    return [note]


# --- the byte path: exact for ApproximateTokenizer ------------------------------------------


def _bytes_drop_whole_units(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> _Layer:
    # Walk from the tail (the units that survive) and stop at the first unit that does not
    # fit: the head is discarded without ever being rendered or measured. (A plain loop beats
    # chunked C-level passes here: CPython 3.11 specialises these attribute and length ops.)
    sep_len = len(UNIT_SEPARATOR)
    limit = max_bytes + sep_len  # n units carry n - 1 separators: credit one back
    total = 0
    kept: list[str] = []
    append = kept.append
    for unit in reversed(units):
        text = unit.text
        if unit.source is not None or "<" in text:
            text = _render(unit)
        size = (len(text) if text.isascii() else utf8_len(text)) + sep_len
        if total + size > limit:
            break  # this unit and everything before it are discarded
        total += size
        append(text)
    n = len(units)
    h = n - len(kept)
    kept.reverse()
    nbytes = total - sep_len if kept else 0
    return _Layer(
        UNIT_SEPARATOR.join(kept),
        -(-nbytes // bpt),
        h,
        n,
        kept,
        notes=_drop_note(units, h, budget),
        nbytes=nbytes,
        drop_reason=_REASON_HEAD,
    )


def _bytes_truncate_tail(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> _Layer:
    sep_len = len(UNIT_SEPARATOR)
    marker_len = utf8_len(TRUNCATION_MARKER)
    parts: list[tuple[str, str, str]] = []
    starts: list[int] = []  # bytes before each unit's rendering, separators included
    cut = -1  # last unit that can start: its tags and the marker fit after the units before
    offset = 0
    fits_whole = True
    for unit in units:
        opening, text, closing = _parts(unit)
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
        return _Layer(
            UNIT_SEPARATOR.join(rendered), -(-nbytes // bpt), 0, n, rendered, nbytes=nbytes
        )
    if cut < 0:
        note = f"not even the truncation marker fits the budget of {budget}; all {n} units dropped"
        return _empty(n, 0, note, _REASON_NO_MARKER)
    opening, text, closing = parts[cut]
    room = max_bytes - starts[cut] - utf8_len(opening) - len(closing) - marker_len
    kept_text = utf8_prefix(text, room)
    if text and not kept_text:
        # Not one character of the cut unit fits: it is not in the text, so it is not kept. The
        # marker then closes the unit before it, which fits whole (its marker needs no more room
        # than the separator, tags and marker that fit after it).
        if cut == 0:
            return _empty(n, 0, _no_room_note(units, n, budget), _REASON_NO_ROOM)
        cut -= 1
        opening, text, closing = parts[cut]
        kept_text = text
    rendered = [o + t + c for o, t, c in parts[:cut]]
    rendered.append(f"{opening}{kept_text}{TRUNCATION_MARKER}{closing}")
    layer_text = UNIT_SEPARATOR.join(rendered)
    nbytes = utf8_len(layer_text)
    notes = _truncate_note(units, cut, budget, len(kept_text) == len(text))
    return _Layer(
        layer_text, -(-nbytes // bpt), 0, cut + 1, rendered, True, notes, nbytes, _REASON_AFTER_CUT
    )


def _bytes_keep_or_drop(units: Sequence[Unit], max_bytes: int, bpt: int, budget: int) -> _Layer:
    rendered = [_render(unit) for unit in units]
    text = UNIT_SEPARATOR.join(rendered)
    nbytes = utf8_len(text)
    n = len(units)
    if nbytes <= max_bytes:
        return _Layer(text, -(-nbytes // bpt), 0, n, rendered, nbytes=nbytes)
    note = f"layer needs {-(-nbytes // bpt)} tokens, over its budget of {budget}; dropped whole"
    return _empty(n, 0, note, _REASON_LAYER)


# --- the general path: any Tokenizer, counts verified on the final text ---------------------

_SLACK = 4
"""Tokens by which joined text may undercut the sum of its parts before we look for it."""
_GROW_STEPS = 4
"""Bounded attempts to use room a non-additive tokenizer left after a truncate_tail cut."""
_WINDOW_CHARS_PER_TOKEN = 64
"""Characters of text re-tokenized per token of room when growing a cut."""


def _general_keep_or_drop(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> _Layer:
    rendered = [_render(unit) for unit in units]
    text = UNIT_SEPARATOR.join(rendered)
    tokens = tokenizer.count(text)
    n = len(units)
    if tokens <= budget:
        return _Layer(text, tokens, 0, n, rendered)
    note = f"layer needs {tokens} tokens, over its budget of {budget}; dropped whole"
    return _empty(n, 0, note, _REASON_LAYER)


def _general_drop_whole_units(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> _Layer:
    # Per-unit counts (of a unit with its following separator, which captures most merges
    # across the join) estimate the cut; the joined text is then counted to verify it, and the
    # estimate steers the few corrections. Only verified fits are ever returned.
    n = len(units)
    count = tokenizer.count
    rendered: list[str | None] = [None] * n
    estimates: dict[int, int] = {}
    totals: dict[int, int] = {}

    def render(i: int) -> str:
        text = rendered[i]
        if text is None:
            text = rendered[i] = _render(units[i])
        return text

    def estimate(i: int) -> int:
        if i not in estimates:
            text = render(i)
            estimates[i] = count(text if i == n - 1 else text + UNIT_SEPARATOR)
        return estimates[i]

    def layer_tokens(h: int) -> int:
        if h not in totals:
            totals[h] = count(UNIT_SEPARATOR.join([render(i) for i in range(h, n)]))
        return totals[h]

    h, acc = n, 0
    while h > 0 and acc + estimate(h - 1) <= budget:
        acc += estimate(h - 1)
        h -= 1
    lo = -1  # largest h known NOT to fit (-1: none known)
    hi = n  # smallest h known to fit (n: the empty layer)
    while True:
        tokens = layer_tokens(h)
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
    # Sub-additive counts (a joined text counting less than its parts) make the estimates
    # overshoot, so smaller h may never have been tried: nothing is discarded without a
    # verified count saying it must be. Try the next unit in; if it fits too, gallop.
    step = 1
    while lo < 0 and hi > 0:
        probe = max(hi - step, 0)
        if layer_tokens(probe) <= budget:
            hi, step = probe, step * 2
        else:
            lo = probe
    # Close the remaining gap by bisection (fit is monotone in h for sane tokenizers).
    while hi - lo > 1 and lo >= 0:
        mid = (lo + hi) // 2
        if layer_tokens(mid) <= budget:
            hi = mid
        else:
            lo = mid
    h = hi
    notes = _drop_note(units, h, budget)
    if h == n:
        return _Layer("", 0, n, n, [], notes=notes, drop_reason=_REASON_HEAD)
    kept = [render(i) for i in range(h, n)]
    text = UNIT_SEPARATOR.join(kept)
    return _Layer(text, layer_tokens(h), h, n, kept, notes=notes, drop_reason=_REASON_HEAD)


def _general_truncate_tail(units: Sequence[Unit], budget: int, tokenizer: Tokenizer) -> _Layer:
    n = len(units)
    count = tokenizer.count
    parts = [_parts(unit) for unit in units]
    rendered = [o + t + c for o, t, c in parts]
    whole = UNIT_SEPARATOR.join(rendered)
    # One pass over the whole rendering: truncate() finds where the budget (less room for the
    # marker) runs out, and memoising tokenizers record the whole count. A closing tag the cut
    # unit may need is left to the shrinking below: reserving it for units without a source
    # would start the cut too early and leave growing to make up the difference.
    reserve = count(TRUNCATION_MARKER)
    prefix = tokenizer.truncate(whole, max(budget - reserve, 0))
    if len(prefix) == len(whole) or count(whole) <= budget:
        tokens = count(whole)
        if tokens <= budget:
            return _Layer(whole, tokens, 0, n, rendered)
    starts: list[int] = []
    offset = 0
    for text in rendered:
        starts.append(offset)
        offset += len(text) + len(UNIT_SEPARATOR)

    def build(cut: int, keep: int) -> str:
        opening, text, closing = parts[cut]
        return f"{whole[: starts[cut]]}{opening}{text[:keep]}{TRUNCATION_MARKER}{closing}"

    def shrink(cut: int, keep: int) -> tuple[int, int, int] | None:
        """Shrink until the layer (marker included) fits, backing into earlier units if not
        even the cut unit's tags and marker fit; None if not even the marker fits."""
        while cut >= 0:
            text = parts[cut][1]
            while True:
                tokens = count(build(cut, keep))
                if tokens <= budget or keep == 0:
                    break
                kept_text = text[:keep]
                shorter = tokenizer.truncate(
                    kept_text, max(count(kept_text) - (tokens - budget), 0)
                )
                keep = min(len(shorter), keep - 1)
            if tokens <= budget:
                return cut, keep, tokens
            cut -= 1
            if cut >= 0:
                keep = len(parts[cut][1])
        return None

    def grow(cut: int, keep: int, tokens: int) -> tuple[int, int, int]:
        """Use room a non-additive tokenizer left: a few bounded steps, each verified. Only a
        window after the cut is re-tokenized, never the whole (possibly huge) unit text.
        Entering the next unit with nothing of it shown is only a step, never a result."""
        best = (cut, keep, tokens)
        steps = 0
        while steps < _GROW_STEPS:
            room = budget - tokens
            text = parts[cut][1]
            if room <= 0:
                break
            if keep == len(text):
                if cut + 1 >= n:
                    break
                entered = count(build(cut + 1, 0))
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
            longer = len(tokenizer.truncate(window, count(text[:keep]) + room))
            if longer <= keep:
                break
            grown = count(build(cut, longer))
            if grown > budget:
                break
            keep, tokens = longer, grown
            best = (cut, keep, tokens)
        return best

    # Start where the budget ran out. A cut unit must show at least one character of its own
    # text (else it is not in the text and cannot be kept): the marker then closes the unit
    # before it, kept whole if it fits so.
    cut = max(bisect.bisect_right(starts, len(prefix)) - 1, 0)
    keep = min(max(len(prefix) - starts[cut] - len(parts[cut][0]), 0), len(parts[cut][1]))
    marker_fits = False
    while True:
        fitted = shrink(cut, keep)
        if fitted is None:
            if marker_fits:
                return _empty(n, 0, _no_room_note(units, n, budget), _REASON_NO_ROOM)
            note = (
                f"not even the truncation marker fits the budget of {budget}; all {n} units dropped"
            )
            return _empty(n, 0, note, _REASON_NO_MARKER)
        cut, keep, tokens = grow(*fitted)
        if keep or not parts[cut][1]:
            break
        marker_fits = True
        if cut == 0:
            return _empty(n, 0, _no_room_note(units, n, budget), _REASON_NO_ROOM)
        cut, keep = cut - 1, len(parts[cut - 1][1])
    layer_text = build(cut, keep)
    opening, text, closing = parts[cut]
    kept = [*rendered[:cut], f"{opening}{text[:keep]}{TRUNCATION_MARKER}{closing}"]
    notes = _truncate_note(units, cut, budget, keep == len(text))
    return _Layer(layer_text, tokens, 0, cut + 1, kept, True, notes, -1, _REASON_AFTER_CUT)


_BytesStrategy = Callable[[Sequence[Unit], int, int, int], _Layer]
_GeneralStrategy = Callable[[Sequence[Unit], int, Tokenizer], _Layer]

_BYTE_STRATEGIES: Mapping[Strategy, _BytesStrategy] = {
    Strategy.DROP_WHOLE_UNITS: _bytes_drop_whole_units,
    Strategy.TRUNCATE_TAIL: _bytes_truncate_tail,
    Strategy.KEEP_OR_DROP: _bytes_keep_or_drop,
}
_GENERAL_STRATEGIES: Mapping[Strategy, _GeneralStrategy] = {
    Strategy.DROP_WHOLE_UNITS: _general_drop_whole_units,
    Strategy.TRUNCATE_TAIL: _general_truncate_tail,
    Strategy.KEEP_OR_DROP: _general_keep_or_drop,
}


def _byte_exact(tokenizer: Tokenizer) -> int | None:
    """bytes_per_token when counts are exactly ceil(bytes / bpt), else None."""
    cls = type(tokenizer)
    if (
        isinstance(tokenizer, ApproximateTokenizer)
        and cls.count is ApproximateTokenizer.count
        and cls.truncate is ApproximateTokenizer.truncate
    ):
        return tokenizer.bytes_per_token
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
    merged_budgets = merge_budgets(budgets)
    merged_strategies = _merge_strategies(strategies)
    tok: Tokenizer = _DEFAULT_TOKENIZER if tokenizer is None else tokenizer
    if not isinstance(tok, Tokenizer):
        raise TypeError(f"tokenizer must implement harness.Tokenizer, got {type(tok).__name__}")
    bpt = _byte_exact(tok)
    if bpt is None:
        empty = tok.count("")
        if empty != 0 or isinstance(empty, bool) or not isinstance(empty, int):
            # An empty layer must fit every budget, 0 included (invariant 1).
            raise ValueError(
                f"tokenizer {tok.name!r} counts the empty string as {empty!r}; a "
                "Tokenizer must count '' as 0 (count fixed per-prompt overhead outside it)"
            )
    estimated = bool(tok.estimated)

    reports: list[LayerReport] = []
    texts: list[str] = []
    total_bytes = 0
    for name in LAYERS:
        units, ids = units_by_layer[name]
        budget = merged_budgets[name]
        strategy = merged_strategies[name]
        if bpt is not None:
            result = _BYTE_STRATEGIES[strategy](units, budget * bpt, bpt, budget)
        else:
            result = _GENERAL_STRATEGIES[strategy](units, budget, tok)
        if result.text:
            texts.append(result.text)
            if bpt is not None:
                total_bytes += result.nbytes if result.nbytes >= 0 else utf8_len(result.text)
        start, stop = result.start, result.stop
        reports.append(
            LayerReport(
                name=name,
                strategy=strategy,
                budget=budget,
                tokens=result.tokens,
                estimated=estimated,
                text=result.text,
                kept=ids[start:stop],
                dropped=ids[:start] + ids[stop:],
                truncated=result.truncated,
                notes=tuple(result.notes),
                _units=units,
                _start=start,
                _stop=stop,
                _cut=result.rendered[-1] if result.truncated else None,
                _drop_reason=result.drop_reason,
            )
        )
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
    )
