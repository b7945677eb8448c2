"""The typed manifest: a versioned, immutable record of one assembly, with a JSON round trip.

``AssembledPrompt.manifest_record()`` returns a :class:`Manifest`; ``AssembledPrompt.manifest()``
is its JSON-ready dict. ``Manifest.from_json(m.to_json()) == m``::

    from harness.prompt_assembler import Manifest, assemble

    record = assemble({"identity": "You are the reviewer."}).manifest_record()
    assert Manifest.from_json(record.to_json()) == record
    assert record.layers[0].units[0].id == "identity"

Records are frozen slotted dataclasses holding JSON types (tuples for lists, an aware
``datetime`` for ISO 8601 times), so equality is structural and a record can be hashed, stored
and compared. Every input unit of a layer is recorded once, in ``units`` (kept) or
``dropped_units`` (with its reason), with its ``index`` among the layer's inputs, its
provenance (trust, version, observed_at, max_age) and the sha256 of its text: that, the
budgets, strategies and authority of each layer, the separators, the tokenizer name and
``now`` are what a replay needs (``harness.prompt_assembler._replay``). ``to_dict`` writes the
schema version under ``manifest_version``; ``from_dict`` refuses a version it does not know
with :class:`ManifestSchemaError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness.prompt_assembler._values import AssemblyError

__all__ = [
    "SCHEMA_VERSION",
    "DroppedUnitManifest",
    "LayerManifest",
    "Manifest",
    "ManifestSchemaError",
    "UnitManifest",
    "iso_time",
    "manifest_dict",
]

SCHEMA_VERSION = 2
"""The manifest schema this module writes and reads (2: provenance, authority, ``now``)."""


class ManifestSchemaError(AssemblyError):
    """A manifest that is not of this schema (wrong version, missing or mistyped fields)."""


def iso_time(value: datetime | None) -> str | None:
    """``value.isoformat()``, None for None."""
    return None if value is None else value.isoformat()


def _request_json(value: object) -> str | None:
    """The canonical JSON of a recorded context request (None when the build had none)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _parse_time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Provenance:
    """What every recorded unit carries besides its fate: where it stood and where it is from."""

    index: int
    trust: str = "trusted"
    version: str | None = None
    observed_at: datetime | None = None
    max_age: float | None = None

    def _provenance(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "trust": self.trust,
            "version": self.version,
            "observed_at": iso_time(self.observed_at),
            "max_age": self.max_age,
        }


def _provenance_args(data: Mapping[str, Any]) -> dict[str, Any]:
    max_age, trust = data["max_age"], data["trust"]
    if trust not in ("trusted", "untrusted"):
        raise ValueError(f"trust must be 'trusted' or 'untrusted', got {trust!r}")
    return {
        "index": data["index"],
        "trust": data["trust"],
        "version": data["version"],
        "observed_at": _parse_time(data["observed_at"]),
        "max_age": None if max_age is None else float(max_age),
    }


@dataclass(frozen=True, slots=True)
class UnitManifest(_Provenance):
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
        entry: dict[str, Any] = {  # the provenance keys inline: one dict, not two
            "id": self.id,
            "source": self.source,
            "sha256": self.sha256,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "index": self.index,
            "trust": self.trust,
            "version": self.version,
            "observed_at": iso_time(self.observed_at),
            "max_age": self.max_age,
        }
        if self.truncated:
            entry["kept_chars"] = self.kept_chars
        return entry

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UnitManifest:
        return cls(
            data["id"],
            data["source"],
            data["sha256"],
            data["tokens"],
            data["truncated"],
            data.get("kept_chars"),
            **_provenance_args(data),
        )


@dataclass(frozen=True, slots=True)
class DroppedUnitManifest(_Provenance):
    """A dropped unit: its id, source, sha256 of its text, and why it was dropped."""

    id: str
    source: str | None
    sha256: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        fate = {"id": self.id, "source": self.source, "sha256": self.sha256, "reason": self.reason}
        return {**fate, **self._provenance()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DroppedUnitManifest:
        fate = (data["id"], data["source"], data["sha256"], data["reason"])
        return cls(*fate, **_provenance_args(data))


@dataclass(frozen=True, slots=True)
class LayerManifest:
    """One layer: authority, strategy, budget and count, kept and dropped ids, notes, units."""

    name: str
    authority: str
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

    def inputs(self) -> tuple[UnitManifest | DroppedUnitManifest, ...]:
        """Every input unit of the layer, kept or dropped, in input order."""
        return tuple(sorted((*self.units, *self.dropped_units), key=lambda unit: unit.index))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "authority": self.authority,
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
    def from_dict(cls, data: Mapping[str, Any]) -> LayerManifest:
        return cls(
            name=data["name"],
            authority=data["authority"],
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


def manifest_dict(
    schema_version: int,
    digest: str,
    tokens: int,
    estimated: bool,
    tokenizer: str,
    layer_order: tuple[str, ...],
    separators: tuple[str, str, str],
    layers: list[dict[str, Any]] | None,
    now: datetime | None,
    request: str | None,
    loans: tuple[tuple[str, str, int], ...],
) -> dict[str, Any]:
    """What ``Manifest.to_dict_with_layers`` returns, written once: a recorded build encodes
    the fields of its manifest but its layers from this too, without a ``Manifest``
    (``layers`` None: no ``layers`` key). ``separators``: layer, unit, truncation marker."""
    data: dict[str, Any] = {
        "manifest_version": schema_version,
        "digest": digest,
        "tokens": tokens,
        "estimated": estimated,
        "tokenizer": tokenizer,
        "layer_order": list(layer_order),
        "layer_separator": separators[0],
        "unit_separator": separators[1],
        "truncation_marker": separators[2],
    }
    if layers is not None:
        data["layers"] = layers
    if now is not None:
        data["now"] = now.isoformat()
    if request is not None:
        data["request"] = json.loads(request)
    if loans:
        data["loans"] = [{"from": f, "to": t, "tokens": n} for f, t, n in loans]
    return data


@dataclass(frozen=True, slots=True)
class Manifest:
    """The record of one assembly: digest, count, tokenizer, separators, ``now``, every layer."""

    digest: str
    tokens: int
    estimated: bool
    tokenizer: str
    layer_order: tuple[str, ...]
    layer_separator: str
    unit_separator: str
    truncation_marker: str
    layers: tuple[LayerManifest, ...]
    now: datetime | None = None
    schema_version: int = SCHEMA_VERSION
    request: str | None = None  # canonical JSON of the build's context request record
    loans: tuple[tuple[str, str, int], ...] = ()  # (from, to, tokens): allocation="ceilings"

    def budgets(self) -> dict[str, int]:
        """The budget each layer was assembled with."""
        return {layer.name: layer.budget for layer in self.layers}

    def strategies(self) -> dict[str, str]:
        """The strategy each layer was trimmed with."""
        return {layer.name: layer.strategy for layer in self.layers}

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict (``AssembledPrompt.manifest()``); ``now`` only when given."""
        return self.to_dict_with_layers([layer.to_dict() for layer in self.layers])

    def to_dict_with_layers(self, layers: list[dict[str, Any]]) -> dict[str, Any]:
        """``to_dict`` with ``layers`` (each layer's ``to_dict``, perhaps shared) as its layers."""
        return manifest_dict(
            self.schema_version,
            self.digest,
            self.tokens,
            self.estimated,
            self.tokenizer,
            self.layer_order,
            (self.layer_separator, self.unit_separator, self.truncation_marker),
            layers,
            self.now,
            self.request,
            self.loans,
        )

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, UTF-8 text): equal manifests give equal strings."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Manifest:
        """The manifest ``to_dict`` wrote; :class:`ManifestSchemaError` for any other shape."""
        if not isinstance(data, Mapping):
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
                now=_parse_time(data.get("now")),
                schema_version=version,
                request=_request_json(data.get("request")),
                loans=tuple(
                    (loan["from"], loan["to"], loan["tokens"]) for loan in data.get("loans", ())
                ),
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ManifestSchemaError(f"not a version {SCHEMA_VERSION} manifest: {exc!r}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        """Parse what :meth:`to_json` wrote."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ManifestSchemaError(f"a manifest must be JSON: {exc}") from None
        return cls.from_dict(data)
