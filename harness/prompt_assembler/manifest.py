"""The typed manifest: a versioned, immutable record of one assembly, with a JSON round trip.

``AssembledPrompt.manifest_record()`` returns a :class:`Manifest`; ``AssembledPrompt.manifest()``
is its JSON-ready dict (CONTRACT.md section 2). ``Manifest.from_json(m.to_json()) == m``::

    from harness.prompt_assembler import Manifest, assemble

    record = assemble({"identity": "You are the reviewer."}).manifest_record()
    assert Manifest.from_json(record.to_json()) == record
    assert record.layers[0].units[0].id == "identity"

Design notes: frozen slotted dataclasses holding only JSON types (tuples for lists), so
equality is structural and a record can be hashed, stored and compared. ``to_dict`` writes
the schema version under ``manifest_version`` (the key the first release wrote);
``from_dict`` refuses a version it does not know with :class:`ManifestSchemaError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.prompt_assembler.values import AssemblyError

__all__ = [
    "SCHEMA_VERSION",
    "DroppedUnitManifest",
    "LayerManifest",
    "Manifest",
    "ManifestSchemaError",
    "UnitManifest",
]

SCHEMA_VERSION = 1
"""The manifest schema this module writes and reads."""


class ManifestSchemaError(AssemblyError):
    """A manifest that is not of this schema (wrong version, missing or mistyped fields)."""


@dataclass(frozen=True, slots=True)
class UnitManifest:
    """A kept unit: its id, source, sha256 of its text, and its rendering's token count.

    ``kept_chars`` (set only when ``truncated``) is how many characters of its neutralised
    text survived the cut.
    """

    id: str
    source: str | None
    sha256: str
    tokens: int
    truncated: bool = False
    kept_chars: int | None = None

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "sha256": self.sha256,
            "tokens": self.tokens,
            "truncated": self.truncated,
        }
        if self.truncated:
            entry["kept_chars"] = self.kept_chars
        return entry

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UnitManifest:
        return cls(
            id=data["id"],
            source=data["source"],
            sha256=data["sha256"],
            tokens=data["tokens"],
            truncated=data["truncated"],
            kept_chars=data.get("kept_chars"),
        )


@dataclass(frozen=True, slots=True)
class DroppedUnitManifest:
    """A dropped unit: its id, source, sha256 of its text, and why it was dropped."""

    id: str
    source: str | None
    sha256: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "sha256": self.sha256, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DroppedUnitManifest:
        return cls(
            id=data["id"], source=data["source"], sha256=data["sha256"], reason=data["reason"]
        )


@dataclass(frozen=True, slots=True)
class LayerManifest:
    """One layer: its strategy, budget and count, kept and dropped ids, notes and units."""

    name: str
    strategy: str
    budget: int
    tokens: int
    estimated: bool
    truncated: bool
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    notes: tuple[str, ...]
    units: tuple[UnitManifest, ...]
    dropped_units: tuple[DroppedUnitManifest, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "strategy": self.strategy,
            "budget": self.budget,
            "tokens": self.tokens,
            "estimated": self.estimated,
            "truncated": self.truncated,
            "kept": list(self.kept),
            "dropped": list(self.dropped),
            "notes": list(self.notes),
            "units": [unit.to_dict() for unit in self.units],
            "dropped_units": [unit.to_dict() for unit in self.dropped_units],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LayerManifest:
        return cls(
            name=data["name"],
            strategy=data["strategy"],
            budget=data["budget"],
            tokens=data["tokens"],
            estimated=data["estimated"],
            truncated=data["truncated"],
            kept=tuple(data["kept"]),
            dropped=tuple(data["dropped"]),
            notes=tuple(data["notes"]),
            units=tuple(UnitManifest.from_dict(unit) for unit in data["units"]),
            dropped_units=tuple(DroppedUnitManifest.from_dict(u) for u in data["dropped_units"]),
        )


@dataclass(frozen=True, slots=True)
class Manifest:
    """The record of one assembly: digest, count, tokenizer, separators and every layer."""

    digest: str
    tokens: int
    estimated: bool
    tokenizer: str
    layer_order: tuple[str, ...]
    layer_separator: str
    unit_separator: str
    truncation_marker: str
    layers: tuple[LayerManifest, ...]
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict (``AssembledPrompt.manifest()``)."""
        return {
            "manifest_version": self.schema_version,
            "digest": self.digest,
            "tokens": self.tokens,
            "estimated": self.estimated,
            "tokenizer": self.tokenizer,
            "layer_order": list(self.layer_order),
            "layer_separator": self.layer_separator,
            "unit_separator": self.unit_separator,
            "truncation_marker": self.truncation_marker,
            "layers": [layer.to_dict() for layer in self.layers],
        }

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, UTF-8 text): equal manifests give equal strings."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        """The manifest ``to_dict`` wrote; :class:`ManifestSchemaError` for any other shape."""
        if not isinstance(data, dict):
            raise ManifestSchemaError(f"a manifest is a JSON object, got {type(data).__name__}")
        version = data.get("manifest_version")
        if version != SCHEMA_VERSION:
            raise ManifestSchemaError(
                f"manifest schema version {version!r} is not {SCHEMA_VERSION}, the version this "
                "harness reads; read it with the harness release that wrote it"
            )
        try:
            return cls(
                digest=data["digest"],
                tokens=data["tokens"],
                estimated=data["estimated"],
                tokenizer=data["tokenizer"],
                layer_order=tuple(data["layer_order"]),
                layer_separator=data["layer_separator"],
                unit_separator=data["unit_separator"],
                truncation_marker=data["truncation_marker"],
                layers=tuple(LayerManifest.from_dict(layer) for layer in data["layers"]),
                schema_version=version,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ManifestSchemaError(f"not a version {SCHEMA_VERSION} manifest: {exc!r}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        """Parse what :meth:`to_json` wrote."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ManifestSchemaError(f"a manifest must be JSON: {exc}") from None
        return cls.from_dict(data)
