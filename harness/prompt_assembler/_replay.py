"""Replay: ``assemble``'s arguments rebuilt from a manifest and the texts of its units.

::

    from harness.prompt_assembler import assemble, replay_inputs
    from harness.prompt_assembler._render import sha256

    prompt = assemble({"identity": "You are the reviewer."})
    record = prompt.manifest_record()
    inputs = replay_inputs(record, {sha256("You are the reviewer."): "You are the reviewer."})
    assert inputs.problems == () and inputs.assemble().digest == prompt.digest

The layout (each layer's name, strategy, budget and authority, in order) comes from the record
itself, so a build of any layout replays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from harness._tokenizer import Tokenizer
from harness.prompt_assembler._assembly import assemble
from harness.prompt_assembler._layout import Authority, LayerSpec, Layout
from harness.prompt_assembler._manifest import LayerManifest, Manifest
from harness.prompt_assembler._prompt import AssembledPrompt
from harness.prompt_assembler._render import sha256
from harness.prompt_assembler._values import (
    LAYER_SEPARATOR,
    TRUNCATION_MARKER,
    UNIT_SEPARATOR,
    AssemblyError,
    Unit,
)

__all__ = ["ReplayInputs", "ReplayProblem", "replay_inputs"]


@dataclass(frozen=True, slots=True)
class ReplayProblem:
    """Why a replay cannot be trusted to match: a unit's text is ``missing`` or ``tampered``
    (its sha256 is not its address), or the record's ``format`` (separators, marker, layers)
    is not one this harness renders."""

    kind: Literal["missing", "tampered", "format"]
    layer: str | None
    unit: str | None
    sha256: str | None
    detail: str


@dataclass(frozen=True, slots=True)
class ReplayInputs:
    """``assemble``'s arguments rebuilt from a manifest: ``assemble(**inputs.arguments())``."""

    layers: Mapping[str, tuple[Unit, ...]]
    budgets: Mapping[str, int]
    strategies: Mapping[str, str]
    now: datetime | None
    tokenizer_name: str
    problems: tuple[ReplayProblem, ...] = field(default=())
    layout: Layout | None = None  # None: the record's layers could not make a layout

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``assemble`` (the tokenizer excepted: pass it yourself)."""
        arguments: dict[str, Any] = {
            "layers": dict(self.layers),
            "budgets": dict(self.budgets),
            "strategies": dict(self.strategies),
            "now": self.now,
        }
        if self.layout is not None:
            arguments["layout"] = self.layout
        return arguments

    def assemble(self, tokenizer: Tokenizer | None = None) -> AssembledPrompt:
        """Re-run ``assemble``; ``tokenizer`` must count as the recorded one did (default:
        ``ApproximateTokenizer()``). Compare the result's ``digest`` with the record's."""
        return assemble(**self.arguments(), tokenizer=tokenizer)


def _layout(manifest: Manifest, problems: list[ReplayProblem]) -> Layout | None:
    names = tuple(layer.name for layer in manifest.layers)
    if names != manifest.layer_order:
        detail = f"the record's layers {names} are not its layer order {manifest.layer_order}"
        problems.append(ReplayProblem("format", None, None, None, detail))
        return None
    try:
        return tuple(_spec(layer) for layer in manifest.layers) or None
    except (AssemblyError, TypeError) as exc:
        problems.append(ReplayProblem("format", None, None, None, str(exc)))
        return None


def _spec(layer: LayerManifest) -> LayerSpec:
    authority: Authority = "instruction" if layer.authority == "instruction" else "information"
    return LayerSpec(layer.name, layer.strategy, layer.budget, authority)  # type: ignore[arg-type]


def _format_problems(manifest: Manifest) -> list[ReplayProblem]:
    expected = (LAYER_SEPARATOR, UNIT_SEPARATOR, TRUNCATION_MARKER)
    found = (manifest.layer_separator, manifest.unit_separator, manifest.truncation_marker)
    if found == expected:
        return []
    detail = "the record's separators or truncation marker differ from this harness's"
    return [ReplayProblem("format", None, None, None, detail)]


def _replay_layer(
    layer: LayerManifest, texts: Mapping[str, str], problems: list[ReplayProblem]
) -> tuple[Unit, ...]:
    units: list[Unit] = []
    for entry in layer.inputs():
        address = entry.sha256
        text = texts.get(address)
        if text is None:
            detail = f"no text stored under {address}"
            problems.append(ReplayProblem("missing", layer.name, entry.id, address, detail))
            continue
        if sha256(text) != address:
            detail = f"the text stored under {address} has another sha256"
            problems.append(ReplayProblem("tampered", layer.name, entry.id, address, detail))
        try:
            unit = Unit(
                entry.id,
                text,
                entry.source,
                trust="untrusted" if entry.trust == "untrusted" else "trusted",
                version=entry.version,
                observed_at=entry.observed_at,
                max_age=entry.max_age,
            )
        except (AssemblyError, TypeError) as exc:
            problems.append(ReplayProblem("format", layer.name, entry.id, address, str(exc)))
            continue
        units.append(unit)
    return tuple(units)


def replay_inputs(manifest: Manifest, texts: Mapping[str, str]) -> ReplayInputs:
    """Rebuild ``assemble``'s arguments from ``manifest`` and ``texts`` (sha256 hex -> text).

    Pure and never raising for bad data: a text missing from ``texts`` leaves its unit out, and
    one whose sha256 is not its address is used as found; both are listed in ``problems`` (as
    is a record whose separators or marker differ from this harness's), so the
    caller reports them instead of a silent mismatch. Units come back in input order with their
    recorded provenance; budgets, strategies and ``now`` are the recorded ones.
    """
    problems = _format_problems(manifest)
    layout = _layout(manifest, problems)
    layers = {layer.name: _replay_layer(layer, texts, problems) for layer in manifest.layers}
    return ReplayInputs(
        layers=layers,
        budgets=manifest.budgets(),
        strategies=manifest.strategies(),
        now=manifest.now,
        tokenizer_name=manifest.tokenizer,
        problems=tuple(problems),
        layout=layout,
    )
