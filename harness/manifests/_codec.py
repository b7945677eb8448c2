"""How a recorded build is laid out in any store: rows, shared layer parts and shared texts.

Pure (no I/O); every backend (SQLite, PostgreSQL) stores what this module encodes::

    from harness.manifests._codec import Written, encode

    batch = encode(records, Written())   # rows for ``manifests``, new parts, new texts
    # ... the backend writes batch.rows, batch.parts and batch.texts in ONE transaction ...
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.manifests._errors import ManifestStoreError
from harness.manifests._record import ManifestRecord
from harness.stores import fits_text

__all__ = [
    "SCHEMA_VERSION",
    "Batch",
    "Encoded",
    "Row",
    "Written",
    "batch",
    "check_columns",
    "check_record",
    "encode",
    "encode_one",
    "expand",
    "inflate",
    "part_addresses",
    "summary",
]

SCHEMA_VERSION = 1
"""The version of this layout, recorded in every store (``harness_schema``) and checked on open."""

Row = tuple[str, str, str, str | None, str, str, bytes]
"""(manifest_id, requested_at, agent, project_id, workspace, digest, manifest blob)."""

_SUMMARY_KEYS = ("tokens", "estimated", "tokenizer", "harness_version")
_PER_BUILD = ("manifest_id", "requested_at", "now", "digest", *_SUMMARY_KEYS)
"""The manifest's keys kept in the row's header; all others but ``layers`` are settings."""
_SETTINGS = "\x00settings"  # the cache slot of the settings part (no layer is named so)


_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
"""What ``json.dumps`` would build on every call with these options (the same output)."""


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder that ``_ENCODER.encode`` makes anew on every call, made once: the same bytes at
# less than half the cost (a recorded build encodes its header every time). Without
# circular-reference markers: a manifest is a tree (a cycle would end in RecursionError).
_MAKE_ENCODER: Callable[..., Callable[[Any, int], Sequence[str]]] | None = getattr(
    json.encoder, "c_make_encoder", None
)
_C_ENCODER = (
    None
    if _MAKE_ENCODER is None
    else _MAKE_ENCODER(
        None, _not_json, json.encoder.encode_basestring, None, ":", ",", True, False, True
    )
)


def _json(value: Any) -> bytes:
    if _C_ENCODER is None:  # an interpreter without the json accelerator
        return _ENCODER.encode(value).encode("utf-8", "surrogatepass")
    return "".join(_C_ENCODER(value, 0)).encode("utf-8", "surrogatepass")


class Written:
    """Addresses (texts and layer parts) a store has committed, most recent last (bounded).

    Only an optimisation: a forgotten address is simply written again (the insert ignores a
    conflict). Rows deleted behind the store's back are not noticed until forgotten (or a
    write fails: that clears it), and a replay then reports their units' texts as missing.
    """

    def __init__(self, limit: int = 65_536) -> None:
        self._seen: dict[str, None] = {}
        self._limit = limit
        self._layers: dict[str, tuple[Mapping[str, Any], str, bytes]] = {}
        self._sources: dict[str, tuple[Mapping[str, Any], str, bytes, list[Any] | None]] = {}
        self.shared: Any = None  # the last build's shared parts, for ``_prompt_codec``

    def layer_address(self, layer: Mapping[str, Any]) -> tuple[str, bytes, list[Any] | None]:
        """A layer's part: its address, its compressed body, and its ``observed_at`` values
        (``_without_volatile``); the very layer dict of the last call for its name (records
        share them) is not looked at again."""
        name = str(layer.get("name"))
        last = self._sources.get(name)
        if last is not None and last[0] is layer:
            return last[1], last[2], last[3]
        shared, values = _without_volatile(layer)
        address, compressed = self.part_address(name, shared)
        self._sources[name] = (layer, address, compressed, values)
        return address, compressed, values

    def __contains__(self, address: object) -> bool:
        return address in self._seen

    def part_address(self, slot: str, part: Mapping[str, Any]) -> tuple[str, bytes]:
        """The address of a part (a layer, or the settings) and its compressed body. ``slot``
        names the kind of part whose last value is remembered.

        (A recorded manifest is not to be changed afterwards: it is compared with the next.)
        """
        last = self._layers.get(slot)
        if last is not None and last[0] == part:
            return last[1], last[2]
        body = _json(part)
        address = hashlib.sha256(body).hexdigest()
        compressed = zlib.compress(body)
        self._layers[slot] = (part, address, compressed)
        return address, compressed

    def clear(self) -> None:
        """Forget every address (after a failed write: nothing is assumed stored any more)."""
        self._seen.clear()

    def add(self, addresses: Iterable[str]) -> None:
        """Remember ``addresses`` as committed (call after the transaction committed)."""
        seen = self._seen
        for address in addresses:
            seen.pop(address, None)
            seen[address] = None
        while len(seen) > self._limit:
            del seen[next(iter(seen))]


@dataclass(slots=True)
class Batch:
    """What one transaction writes: the builds' rows, and the parts and texts not yet stored."""

    rows: list[Row] = field(default_factory=list)
    parts: dict[str, bytes] = field(default_factory=dict)
    texts: dict[str, bytes] = field(default_factory=dict)


_VOLATILE = "observed_at"
_ENTRY_LISTS = ("units", "dropped_units")
_OBSERVED = "observed_at_by_layer"  # the header's key for the values taken out of the parts


def _without_volatile(layer: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[Any] | None]:
    """The layer with every unit's ``observed_at`` set to None, and those values by position
    (None when there were none to take out)."""
    entries = [entry for key in _ENTRY_LISTS for entry in layer.get(key, ())]
    values = [entry.get(_VOLATILE) for entry in entries]
    if all(value is None for value in values):
        return layer, None
    stripped = dict(layer)
    for key in _ENTRY_LISTS:
        if key in layer:
            stripped[key] = [
                {**entry, _VOLATILE: None} if _VOLATILE in entry else entry for entry in layer[key]
            ]
    return stripped, values


def _with_volatile(layer: dict[str, Any], values: Sequence[Any]) -> dict[str, Any]:
    entries = [entry for key in _ENTRY_LISTS for entry in layer.get(key, ())]
    for entry, value in zip(entries, values, strict=False):
        if _VOLATILE in entry:
            entry[_VOLATILE] = value
    return layer


_COLUMNS = {
    "manifest_id": "manifest id",
    "requested_at": "time",
    "agent": "agent",
    "project_id": "project id",
    "workspace": "workspace path",
    "digest": "digest",
}
"""The manifest's values stored as text columns (what ``list`` filters on), and their names."""


def check_record(record: ManifestRecord) -> None:
    """Raise ``ManifestStoreError`` for a record no store can hold: a column that is not text
    (a workspace path in another encoding arrives with lone surrogates). Checked per build,
    before it joins a batch, so that only that build fails."""
    check_columns(record.manifest)


def check_columns(values: Mapping[str, Any]) -> None:
    """``check_record`` of a record whose manifest holds ``values`` (at least its columns)."""
    for key, what in _COLUMNS.items():
        value = values.get(key)
        if isinstance(value, str) and not fits_text(value):
            raise ManifestStoreError(
                f"this build cannot be recorded: its {what} {value!r} is not valid UTF-8 "
                "(bytes of another encoding, e.g. in a directory name): rename it, or build "
                "without a manifest store"
            )


@dataclass(frozen=True, slots=True)
class Encoded:
    """One record made ready to write: its row, every part it points to (compressed bodies by
    address), and its texts by address. Which parts and texts a write must send is decided only
    when it is written (``batch``): a store forgets what it held after a failed write. It
    holds nothing else of the record: the manifest's dicts are freed while the build waits
    for its commit (fewer objects for the garbage collector to go through meanwhile)."""

    row: Row
    parts: dict[str, bytes]  # one dict, not a tuple per part: fewer objects while it waits
    texts: Mapping[str, str]

    @property
    def manifest_id(self) -> str:
        return self.row[0]


def encode_one(record: ManifestRecord, written: Written) -> Encoded:
    """``record`` encoded (see docs/architecture/stores.md); ``ManifestStoreError`` for a
    record no store can hold. Pure but for ``written``'s memo of the last parts."""
    check_record(record)
    manifest = record.manifest
    header = {key: manifest[key] for key in _PER_BUILD if key in manifest}
    settings = {k: v for k, v in manifest.items() if k not in header and k != "layers"}
    address, compressed = written.part_address(_SETTINGS, settings)
    header["settings"] = address
    parts = {address: compressed}
    addresses, observed = [], {}
    for layer in manifest["layers"]:
        address, compressed, values = written.layer_address(layer)
        parts[address] = compressed
        addresses.append(address)
        if values is not None:
            observed[str(layer.get("name"))] = values
    header["layers"] = addresses
    if observed:
        header[_OBSERVED] = observed
    row = (
        record.manifest_id,
        manifest["requested_at"],
        manifest["agent"],
        manifest["project_id"],
        manifest["workspace"],
        manifest["digest"],
        _json(header),
    )
    return Encoded(row, parts, record.texts)


def batch(records: Iterable[Encoded], written: Written) -> Batch:
    """The batch that stores ``records``: their rows, and the parts and texts ``written`` does
    not know to be stored."""
    made = Batch()
    parts, texts, seen = made.parts, made.texts, written._seen
    for encoded in records:
        for address, compressed in encoded.parts.items():
            if address not in seen and address not in parts:
                parts[address] = compressed
        for address, text in encoded.texts.items():
            if address not in seen and address not in texts:
                texts[address] = text.encode("utf-8", "surrogatepass")
        made.rows.append(encoded.row)
    return made


def encode(records: Sequence[ManifestRecord], written: Written) -> Batch:
    """The batch that stores ``records`` (see docs/architecture/stores.md)."""
    return batch([encode_one(record, written) for record in records], written)


def inflate(where: str, blob: object, what: str) -> dict[str, Any]:
    """Parse a row's header; a damaged one is a ``ManifestStoreError``."""
    try:
        if not isinstance(blob, bytes):
            raise TypeError(f"a {type(blob).__name__}, not a BLOB")
        header = json.loads(blob.decode("utf-8", "surrogatepass"))
        if not isinstance(header, dict) or not isinstance(header.get("layers"), list):
            raise ValueError("not a manifest header")
        return header
    except (TypeError, ValueError) as exc:
        raise ManifestStoreError(
            f"{where} is damaged: {what} cannot be read ({exc}): restore the store from a backup"
        ) from None


def part_addresses(header: Mapping[str, Any]) -> list[str]:
    """The parts a header points to: its settings, then its layers."""
    return [str(header.get("settings")), *(str(address) for address in header["layers"])]


def _part(where: str, name: object, address: str, parts: Mapping[str, bytes]) -> Any:
    blob = parts.get(address)
    if blob is None:
        raise ManifestStoreError(
            f"{where} is damaged: manifest {name!r} points to a missing record {address}: "
            "restore the store from a backup"
        )
    try:
        body = zlib.decompress(blob)
    except (zlib.error, TypeError):
        body = b""
    if hashlib.sha256(body).hexdigest() != address:
        raise ManifestStoreError(
            f"{where} is damaged: the record {address} of manifest {name!r} does not match "
            "its address: restore the store from a backup"
        )
    return json.loads(body.decode("utf-8", "surrogatepass"))


def expand(where: str, header: dict[str, Any], parts: Mapping[str, bytes]) -> dict[str, Any]:
    """The full manifest: ``header`` (a parsed row) with its settings and layers put back."""
    name = header.get("manifest_id")
    settings = _part(where, name, str(header.get("settings")), parts)
    observed = header.get(_OBSERVED) or {}
    layers = []
    for address in header["layers"]:
        layer = _part(where, name, str(address), parts)
        values = observed.get(layer.get("name")) if isinstance(layer, dict) else None
        layers.append(_with_volatile(layer, values) if values is not None else layer)
    found = {key: value for key, value in header.items() if key not in ("settings", _OBSERVED)}
    return {**settings, **found, "layers": layers}


def summary(where: str, row: Sequence[Any]) -> dict[str, Any]:
    """What ``list`` returns for one row (``Row`` order)."""
    manifest_id, requested_at, agent, project_id, workspace, digest, blob = row
    manifest = inflate(where, blob, f"manifest {manifest_id!r}")
    found: dict[str, Any] = {
        "manifest_id": manifest_id,
        "requested_at": requested_at,
        "agent": agent,
        "project_id": project_id,
        "workspace": workspace,
        "digest": digest,
    }
    found.update({key: manifest.get(key) for key in _SUMMARY_KEYS})
    return found
