"""The inputs of a build as recorded: every unit of every layer, in input order, by address.

::

    from harness import Unit, assemble
    from harness.manifests.inputs import layer_inputs, rebuild_layers

    prompt = assemble({"task_state": [Unit("goal", "ship it")]})
    recorded = layer_inputs(prompt)                  # {"task_state": [{"id": "goal", ...}], ...}
    texts = {entry["sha256"]: "ship it" for entry in recorded["task_state"]}
    layers, problems = rebuild_layers(recorded, texts)
    assert layers["task_state"][0].text == "ship it" and problems == []

Design notes: the assembler's manifest lists kept and dropped units, but not where the dropped
ones stood among the kept (a stale unit can sit anywhere), so the store records each layer's
units in input order with every field of ``Unit`` except its text, which is stored once under
its sha256. Fields are read generically from the ``Unit`` dataclass, so a field the assembler
adds is recorded without a change here; a ``datetime`` is written in ISO 8601.

Rebuilding never raises for tampered data: a text missing from the mapping, or whose sha256
is not its address, is reported as a ``Problem`` (a missing text leaves its unit out; a
tampered one is used as found, so the replay shows what it would now produce).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from harness.prompt_assembler import LAYERS, AssembledPrompt, Unit

__all__ = ["Problem", "layer_inputs", "rebuild_layers", "text_address", "unit_texts"]

_UNIT_FIELDS = tuple(f.name for f in dataclasses.fields(Unit) if f.name != "text")
_DATETIME_FIELDS = frozenset(
    f.name for f in dataclasses.fields(Unit) if "datetime" in str(f.type) and f.name != "text"
)


def text_address(text: str) -> str:
    """The sha256 (hex) a text is stored under: of its UTF-8 bytes (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _units_of(prompt: AssembledPrompt) -> dict[str, tuple[Unit, ...]]:
    return {report.name: report._units for report in prompt.layers}


def _entry(unit: Unit) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for name in _UNIT_FIELDS:
        value = getattr(unit, name)
        entry[name] = value.isoformat() if isinstance(value, datetime) else value
    entry["sha256"] = text_address(unit.text)
    return entry


def layer_inputs(prompt: AssembledPrompt) -> dict[str, list[dict[str, Any]]]:
    """Per layer, its input units in input order: every field but the text, plus its sha256."""
    return {name: [_entry(unit) for unit in units] for name, units in _units_of(prompt).items()}


def unit_texts(prompt: AssembledPrompt) -> dict[str, str]:
    """Every input unit's text (kept or dropped) by its address."""
    return {
        text_address(unit.text): unit.text for units in _units_of(prompt).values() for unit in units
    }


@dataclass(frozen=True, slots=True)
class Problem:
    """A recorded unit whose text cannot be trusted: ``missing`` or ``tampered``."""

    kind: Literal["missing", "tampered"]
    layer: str
    unit: str
    sha256: str


def rebuild_layers(
    inputs: Mapping[str, Sequence[Mapping[str, Any]]], texts: Mapping[str, str]
) -> tuple[dict[str, list[Unit]], list[Problem]]:
    """The ``layers`` argument of ``assemble`` rebuilt from recorded inputs and stored texts.

    ``texts`` maps an address to the text found there (which may no longer hash to it).
    Returns the layers and every problem found, in layer and input order.
    """
    layers: dict[str, list[Unit]] = {}
    problems: list[Problem] = []
    for name in LAYERS:
        units: list[Unit] = []
        for entry in inputs.get(name, ()):
            address = str(entry["sha256"])
            text = texts.get(address)
            if text is None:
                problems.append(Problem("missing", name, str(entry["id"]), address))
                continue
            if text_address(text) != address:
                problems.append(Problem("tampered", name, str(entry["id"]), address))
            fields = {key: entry[key] for key in _UNIT_FIELDS if key in entry}
            for key in _DATETIME_FIELDS & fields.keys():
                if fields[key] is not None:
                    fields[key] = datetime.fromisoformat(fields[key])
            units.append(Unit(text=text, **fields))
        layers[name] = units
    return layers, problems
