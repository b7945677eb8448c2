"""The assembled prompt: its text, the five layer reports, and the manifest built on demand.

    from harness.prompt_assembler import assemble

    prompt = assemble({"identity": "You are the reviewer.", "task_state": "step 2 of 5"})
    assert prompt.layer("identity").kept == ("identity",)
    assert prompt.manifest()["digest"] == prompt.digest
    print(repr(prompt))  # one summary line, not the whole prompt

The digest and the manifest are computed on first access and reused, so building a prompt
costs nothing for a manifest nobody reads. A recorded build reads it every time, so it is built
from what the assembly already has: the kept units' renderings (counted, not rendered again)
and, when ``assemble`` was given an :class:`~harness.prompt_assembler.AssemblyCache`, texts
hashed and whole layer manifests memoised there (a layer repeats from build to build).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from harness._tokenizer import Tokenizer, utf8_len
from harness.prompt_assembler._cache import AssemblyCache
from harness.prompt_assembler._layout import DEFAULT_LAYOUT, Layout, layout_names
from harness.prompt_assembler._manifest import (
    DroppedUnitManifest,
    LayerManifest,
    Manifest,
    UnitManifest,
)
from harness.prompt_assembler._render import kept_chars, render, sha256
from harness.prompt_assembler._values import (
    LAYER_SEPARATOR,
    TRUNCATION_MARKER,
    UNIT_SEPARATOR,
    LayerReport,
    Unit,
    fast_new,
    fast_replace,
)
from harness.prompt_assembler.strategies.layer import LayerResult, byte_exact

__all__ = ["STALE", "AssembledPrompt", "LayerTrim", "new_prompt"]

STALE = "stale"
"""The reason recorded for a unit dropped because it was older than its ``max_age``."""

LayerTrim = tuple[Sequence[Unit], Sequence[Unit], tuple[int, ...] | None, LayerResult]
"""A layer's input units, the fresh ones the strategy got (all of them unless some were stale;
then the third item holds their indexes among the inputs), and the strategy's result. A plain
tuple: one is built per layer per call, on the small-call fast path."""


def texts_by_digest(layers: Sequence[LayerManifest], trims: Sequence[LayerTrim]) -> dict[str, str]:
    """Each input unit's text (kept or dropped) by the sha256 its entry in ``layers`` (the
    manifests of the layers ``trims`` made) records."""
    texts: dict[str, str] = {}
    for layer, trim in zip(layers, trims, strict=True):
        units = trim[0]
        for entry in layer.units:
            texts[entry.sha256] = units[entry.index].text
        for dropped in layer.dropped_units:
            texts[dropped.sha256] = units[dropped.index].text
    return texts


@dataclass(frozen=True, repr=False)
class AssembledPrompt:
    """The assembled prompt, its per-layer reports, and a reproducible manifest."""

    text: str
    layers: tuple[LayerReport, ...]
    tokens: int
    estimated: bool
    tokenizer_name: str
    _tokenizer: Tokenizer = field(compare=False, kw_only=True)
    _trims: tuple[LayerTrim, ...] = field(default=(), compare=False, kw_only=True)
    _now: datetime | None = field(default=None, compare=False, kw_only=True)
    _layout: Layout = field(default=DEFAULT_LAYOUT, compare=False, kw_only=True)
    _cache: AssemblyCache | None = field(default=None, compare=False, kw_only=True)
    manifest_id: str | None = field(default=None, kw_only=True)  # set by a recording Harness
    # What a build with a context request adds to the manifest (readiness, exclusions,
    # loans), as canonical JSON; None for a plain assembly.
    _request: str | None = field(default=None, compare=False, kw_only=True)
    loans: tuple[tuple[str, str, int], ...] = field(default=(), kw_only=True)
    """Each loan of unused tokens (from layer, to layer, tokens), under allocation="ceilings"."""

    def __repr__(self) -> str:
        """One line: tokens, digest prefix, and kept/dropped unit counts per layer."""
        layers = ", ".join(
            f"{r.name} {len(r.kept)}/{len(r.dropped)}{' truncated' if r.truncated else ''}"
            for r in self.layers
        )
        how = "estimated" if self.estimated else "exact"
        return (
            f"<AssembledPrompt {self.tokens} tokens ({how}, {self.tokenizer_name}) "
            f"sha256 {self.digest[:12]}; kept/dropped: {layers}>"
        )

    @cached_property
    def digest(self) -> str:
        """sha256 hex of ``text`` encoded as UTF-8 (computed on first access, then reused)."""
        return sha256(self.text)

    @cached_property
    def _record(self) -> Manifest:
        return _build_manifest(self)

    @cached_property
    def _manifest_json(self) -> str:
        return self._record.to_json()

    def layer(self, name: str) -> LayerReport:
        """The report of layer ``name``."""
        for report in self.layers:
            if report.name == name:
                return report
        known = ", ".join(layout_names(self._layout))
        raise KeyError(f"unknown layer {name!r}; layers are {known}")

    def input_units(self) -> dict[str, tuple[Unit, ...]]:
        """Every layer's input units, kept or dropped, in input order (layout order)."""
        return {
            report.name: tuple(trim[0])
            for report, trim in zip(self.layers, self._trims, strict=True)
        }

    def input_texts(self) -> dict[str, str]:
        """Every input unit's text (kept or dropped) by the sha256 its manifest entry records."""
        return texts_by_digest(self._record.layers, self._trims)

    def manifest_record(self) -> Manifest:
        """The typed manifest (computed on first call, then reused)."""
        return self._record

    def layer_dicts(self) -> list[dict[str, Any]]:
        """Each layer's manifest as a dict, in layout order; with a cache, a layer equal to one
        of an earlier build shares that build's dict (never change them)."""
        layers, cache = self._record.layers, self._cache
        if cache is None:
            return [layer.to_dict() for layer in layers]
        return [cache.layer_dict(layer) for layer in layers]

    def manifest(self) -> dict[str, Any]:
        """A JSON-serialisable record of the assembly (a fresh copy on every call).

        Holds the digest, token total, tokenizer, separators and marker, and per layer its
        strategy, budget, tokens, kept/dropped ids, truncation, notes, and per kept unit its
        id, source, sha256 of its text and the token count of its rendering as it appears.
        """
        result: dict[str, Any] = json.loads(self._manifest_json)
        return result


new_prompt: Callable[..., AssembledPrompt] = fast_new(AssembledPrompt)
"""``AssembledPrompt(...)`` with every field given positionally (``manifest_id``, then
``_request``, last)."""


def _layer_manifest(
    report: LayerReport,
    trim: LayerTrim,
    count: Callable[[str], int],
    bpt: int | None,
    authority: str,
    text_sha256: Callable[[str], str],
) -> LayerManifest:
    """The layer's manifest, from what the assembly already has: the kept units' renderings
    (``result.rendered``, one per kept unit, in order) are counted, not rendered again (with
    ``bpt``, counts are ceil(UTF-8 bytes / bpt), inline), and texts are hashed through
    ``text_sha256`` (a cache's memo, or plain). It runs for every recorded build, once per
    unit: kept in one function with local names (no per-unit calls), hence its length."""
    units, _, stale_positions, result = trim
    positions: Sequence[int] = range(len(units)) if stale_positions is None else stale_positions
    kept_at = [positions[i] for i in result.kept_indexes()]
    renderings: Sequence[str | None] = result.rendered
    if len(renderings) != len(kept_at):  # not one per kept unit: render them here
        renderings = [None] * len(kept_at)
    last = len(kept_at) - 1
    entries = []
    for n, index in enumerate(kept_at):
        unit = units[index]
        cut = result.truncated and n == last
        rendered = renderings[n]
        if rendered is None:
            rendered = result.rendered[-1] if cut else render(unit)
        max_age = unit.max_age
        entries.append(
            UnitManifest(
                unit.id,
                unit.source,
                text_sha256(unit.text),
                count(rendered)
                if bpt is None
                else -(-(len(rendered) if rendered.isascii() else utf8_len(rendered)) // bpt),
                cut,
                kept_chars(unit, rendered) if cut else None,
                index=index,
                trust=unit.trust,
                version=unit.version,
                observed_at=unit.observed_at,
                max_age=None if max_age is None else float(max_age),
            )
        )
    kept = set(kept_at)
    fresh = set(positions)
    dropped = [
        DroppedUnitManifest(
            unit.id,
            unit.source,
            text_sha256(unit.text),
            result.drop_reason if index in fresh else STALE,
            index=index,
            trust=unit.trust,
            version=unit.version,
            observed_at=unit.observed_at,
            max_age=None if unit.max_age is None else float(unit.max_age),
        )
        for index, unit in enumerate(units)
        if index not in kept
    ]
    return LayerManifest(
        name=report.name,
        authority=authority,
        strategy=str(report.strategy),
        budget=report.budget,
        tokens=report.tokens,
        estimated=report.estimated,
        truncated=report.truncated,
        kept=report.kept,
        dropped=report.dropped,
        notes=report.notes,
        units=tuple(entries),
        dropped_units=tuple(dropped),
    )


_MEMO_UNITS = 64
"""Layers of more units are built every time (their keys would cost what they save)."""


def _layer_key(report: LayerReport, trim: LayerTrim, bpt: int) -> tuple[Any, ...] | None:
    """Everything a byte-exact layer's manifest is a function of but its units' times, or None
    for a large layer.

    The report's fields, the strategy's cut (which units it kept, the cut rendering, the drop
    reason), the stale positions, and per unit every field its entry is made of except
    ``observed_at``: a unit read anew each build (the ``.AGENTS/`` files) carries a new time
    every build, and the memo would never answer; ``_at_times`` puts the build's own times
    into what it answers."""
    units, _, stale_positions, result = trim
    if len(units) > _MEMO_UNITS:
        return None
    unit_keys = tuple([(u.id, u.text, u.source, u.trust, u.version, u.max_age) for u in units])
    return (
        bpt,
        report.name,
        str(report.strategy),
        report.budget,
        report.tokens,
        report.estimated,
        report.truncated,
        report.kept,
        report.dropped,
        report.notes,
        result.start,
        result.stop,
        result.kept_at,
        result.truncated,
        result.drop_reason,
        stale_positions,
        result.rendered[-1] if result.truncated else None,
        unit_keys,
    )


def _same_moment(recorded: datetime | None, given: datetime | None) -> bool:
    """Whether an entry recorded at ``recorded`` reads as one at ``given``: equal datetimes of
    equal offsets format alike (equal ones of different offsets do not)."""
    if recorded is given:
        return True
    if recorded is None or given is None:
        return False
    return recorded == given and recorded.utcoffset() == given.utcoffset()


def _at_times(layer: LayerManifest, units: Sequence[Unit]) -> LayerManifest:
    """``layer`` (memoised for units equal to ``units`` in all but their times) with each
    entry's ``observed_at`` its own unit's: the very object when every time agrees (later
    memos know it by identity), else a copy with the times replaced."""
    for entries in (layer.units, layer.dropped_units):
        for entry in entries:
            recorded, given = entry.observed_at, units[entry.index].observed_at
            if recorded is not given and not _same_moment(recorded, given):
                return _with_entries(
                    layer,
                    tuple([_unit_at(e, units[e.index].observed_at) for e in layer.units]),
                    tuple(
                        [_dropped_at(e, units[e.index].observed_at) for e in layer.dropped_units]
                    ),
                )
    return layer


# A layer read anew each build gets its own copies (dataclasses.replace costs 3x as much).
_with_entries = fast_replace(LayerManifest, "units", "dropped_units")
_unit_at = fast_replace(UnitManifest, "observed_at")
_dropped_at = fast_replace(DroppedUnitManifest, "observed_at")


def memoised_layer(
    prompt: AssembledPrompt,
    index: int,
    count: Callable[[str], int],
    bpt: int,
    digest: Callable[[str], str],
) -> LayerManifest | None:
    """Layer ``index``'s manifest as the cache memoises it (built and remembered on a miss):
    the same object for every build whose layer differs at most in its units' times, which
    are those of the build that made it. None for a layer too large to memoise."""
    cache = prompt._cache
    assert cache is not None
    spec, report, trim = prompt._layout[index], prompt.layers[index], prompt._trims[index]
    key = _layer_key(report, trim, bpt)
    if key is None:
        return None
    units, key = trim[0], (key, spec.authority)
    memoised = cache.known_layer(key)  # the common case: nothing to build
    if memoised is None:
        memoised = cache.layer_manifest(
            key,
            sum([len(unit.text) for unit in units]),
            len(units),
            functools.partial(_layer_manifest, report, trim, count, bpt, spec.authority, digest),
        )
    return memoised


def _build_manifest(prompt: AssembledPrompt) -> Manifest:
    tokenizer, cache = prompt._tokenizer, prompt._cache
    count, bpt = tokenizer.count, byte_exact(tokenizer)
    digest = sha256 if cache is None else cache.text_sha256
    layers = []
    for index, (spec, report, trim) in enumerate(
        zip(prompt._layout, prompt.layers, prompt._trims, strict=True)
    ):
        memoised = (
            None
            if cache is None or bpt is None
            else memoised_layer(prompt, index, count, bpt, digest)
        )
        if memoised is None:
            layers.append(_layer_manifest(report, trim, count, bpt, spec.authority, digest))
        else:
            layers.append(_at_times(memoised, trim[0]))
    return Manifest(
        digest=prompt.digest,
        tokens=prompt.tokens,
        estimated=prompt.estimated,
        tokenizer=prompt.tokenizer_name,
        layer_order=layout_names(prompt._layout),
        layer_separator=LAYER_SEPARATOR,
        unit_separator=UNIT_SEPARATOR,
        truncation_marker=TRUNCATION_MARKER,
        layers=tuple(layers),
        now=prompt._now,
        request=prompt._request,
        loans=prompt.loans,
    )
