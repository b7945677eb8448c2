"""What changed between two recorded builds, per layer: for terminals and for machines.

Pure: two manifests (as ``ManifestStore.get`` returns them) in, a ``ManifestDiff`` out::

    from harness.manifests._diff import diff_manifests

    change = diff_manifests(manifest_a, manifest_b)
    print(change.render())             # readable at a terminal, control characters escaped
    json_form = change.to_json()       # the same facts for machines
    change.same                        # True when nothing differs
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.workspace import display_path

__all__ = [
    "FieldChange",
    "LayerDiff",
    "ManifestDiff",
    "UnitRef",
    "diff_manifests",
    "display_value",
]


@dataclass(frozen=True, slots=True)
class UnitRef:
    """A unit as one build recorded it: its id, source, text sha256 and fate."""

    id: str
    source: str | None
    sha256: str
    fate: str  # "kept", "truncated" or "dropped"
    reason: str | None = None  # why it was dropped, as recorded

    def fate_text(self) -> str:
        """The unit's fate in words: ``kept``, ``truncated``, or ``dropped (reason)``."""
        return f"dropped ({self.reason})" if self.fate == "dropped" and self.reason else self.fate

    def describe(self) -> str:
        """Deprecated alias of :meth:`fate_text` (one name per idea); removed next release."""
        warnings.warn(
            "UnitRef.describe is deprecated: call UnitRef.fate_text",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.fate_text()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "sha256": self.sha256,
            "fate": self.fate,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One setting or context field that differs: its name, value in A and value in B."""

    name: str
    a: Any
    b: Any

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "a": self.a, "b": self.b}


@dataclass(frozen=True, slots=True)
class LayerDiff:
    """One layer's differences; ``changed`` and ``trimmed`` are (unit in A, unit in B) pairs."""

    name: str
    added: tuple[UnitRef, ...]
    removed: tuple[UnitRef, ...]
    changed: tuple[tuple[UnitRef, UnitRef], ...]
    trimmed: tuple[tuple[UnitRef, UnitRef], ...]
    settings: tuple[FieldChange, ...]

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed or self.trimmed or self.settings)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "added": [unit.to_json() for unit in self.added],
            "removed": [unit.to_json() for unit in self.removed],
            "changed": [{"a": a.to_json(), "b": b.to_json()} for a, b in self.changed],
            "trimmed_differently": [{"a": a.to_json(), "b": b.to_json()} for a, b in self.trimmed],
            "settings": [change.to_json() for change in self.settings],
        }


@dataclass(frozen=True, slots=True)
class ManifestDiff:
    """The differences between build A and build B (see docs/architecture/stores.md)."""

    a: str
    b: str
    context: tuple[FieldChange, ...]
    layers: tuple[LayerDiff, ...]

    @property
    def same(self) -> bool:
        return not self.context and all(layer.same for layer in self.layers)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "same": self.same,
            "context": [change.to_json() for change in self.context],
            "layers": [layer.to_json() for layer in self.layers],
        }

    def render(self) -> str:
        """A readable report for a terminal (see docs/architecture/stores.md)."""
        return _render(self)

    def __str__(self) -> str:
        return self.render()


def _units(layer: Mapping[str, Any]) -> dict[str, UnitRef]:
    """Every input unit of a recorded layer by id, with its fate."""
    truncated = {unit["id"] for unit in layer.get("units", ()) if unit.get("truncated")}
    reasons = {unit["id"]: unit.get("reason") for unit in layer.get("dropped_units", ())}
    kept = set(layer.get("kept", ()))
    entries = sorted(
        (*layer.get("units", ()), *layer.get("dropped_units", ())),
        key=lambda entry: int(entry.get("index", 0)),
    )
    found: dict[str, UnitRef] = {}
    for entry in entries:
        unit_id = str(entry["id"])
        fate = "truncated" if unit_id in truncated else "kept" if unit_id in kept else "dropped"
        found[unit_id] = UnitRef(
            unit_id,
            entry.get("source"),
            str(entry.get("sha256")),
            fate,
            reasons.get(unit_id) if fate == "dropped" else None,
        )
    return found


_LAYER_SETTINGS = ("budget", "strategy")
_CONTEXT = (
    "digest",
    "tokens",
    "tokenizer",
    "agent",
    "project_id",
    "workspace",
    "now",
    "harness_version",
)


def _layer_diff(name: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> LayerDiff:
    units_a, units_b = _units(a), _units(b)
    both = [unit_id for unit_id in units_a if unit_id in units_b]
    return LayerDiff(
        name=name,
        added=tuple(unit for unit_id, unit in units_b.items() if unit_id not in units_a),
        removed=tuple(unit for unit_id, unit in units_a.items() if unit_id not in units_b),
        changed=tuple(
            (units_a[i], units_b[i]) for i in both if units_a[i].sha256 != units_b[i].sha256
        ),
        trimmed=tuple((units_a[i], units_b[i]) for i in both if units_a[i].fate != units_b[i].fate),
        settings=tuple(
            FieldChange(key, a.get(key), b.get(key))
            for key in _LAYER_SETTINGS
            if a.get(key) != b.get(key)
        ),
    )


def diff_manifests(a: Mapping[str, Any], b: Mapping[str, Any]) -> ManifestDiff:
    """The differences from build ``a`` to build ``b`` (recorded manifests)."""
    layers_a = {layer["name"]: layer for layer in a.get("layers", ())}
    layers_b = {layer["name"]: layer for layer in b.get("layers", ())}
    names = [*layers_a, *(name for name in layers_b if name not in layers_a)]
    return ManifestDiff(
        a=str(a.get("manifest_id")),
        b=str(b.get("manifest_id")),
        context=tuple(
            FieldChange(key, a.get(key), b.get(key)) for key in _CONTEXT if a.get(key) != b.get(key)
        ),
        layers=tuple(
            _layer_diff(name, layers_a.get(name, {}), layers_b.get(name, {})) for name in names
        ),
    )


_LONE_SURROGATE = re.compile(r"([\ud800-\udc7f\udd00-\udfff])")


def display_value(value: Any) -> str:
    """A value as the terminal sees it, through the display escaper; a lone surrogate that
    is not an undecodable byte (those are shown as backslash-x and two hex digits) is shown
    as backslash-u and four hex digits, as Python writes it."""
    if value is None:
        return "-"
    pieces = _LONE_SURROGATE.split(str(value))
    return "".join(
        f"\\u{ord(piece):04x}" if index % 2 else display_path(piece)
        for index, piece in enumerate(pieces)
    )


def _counts(layer: LayerDiff) -> str:
    parts = [
        f"{len(items)} {label}"
        for items, label in (
            (layer.added, "added"),
            (layer.removed, "removed"),
            (layer.changed, "changed"),
            (layer.trimmed, "trimmed differently"),
            (layer.settings, "setting(s) changed"),
        )
        if items
    ]
    return ", ".join(parts) if parts else "no changes"


def _render(diff: ManifestDiff) -> str:
    lines = [f"diff A {display_value(diff.a)} -> B {display_value(diff.b)}"]
    if diff.same:
        lines.append("no differences: same inputs, same trimming, same prompt")
    for change in diff.context:
        a, b = display_value(change.a), display_value(change.b)
        if change.name == "digest":  # the sha256 prefix debug prints; --json has it whole
            a, b = a[:16], b[:16]
        lines.append(f"  {change.name:<16} {a} -> {b}")
    for layer in diff.layers:
        lines.append(f"{layer.name:<18} {_counts(layer)}")
        for unit in layer.added:
            lines.append(f"  + {display_value(unit.id):<40} added in B ({unit.fate_text()})")
        for unit in layer.removed:
            lines.append(f"  - {display_value(unit.id):<40} removed in B (was {unit.fate_text()})")
        for old, new in layer.changed:
            shas = f"{old.sha256[:12]} -> {new.sha256[:12]}"
            lines.append(f"  ~ {display_value(old.id):<40} changed: sha256 {shas}")
        for old, new in layer.trimmed:
            lines.append(
                f"  ! {display_value(old.id):<40} trimmed differently: {old.fate_text()} in A, "
                f"{new.fate_text()} in B"
            )
        for change in layer.settings:
            lines.append(
                f"  * {change.name:<40} {display_value(change.a)} -> {display_value(change.b)}"
            )
    return "\n".join(lines) + "\n"
