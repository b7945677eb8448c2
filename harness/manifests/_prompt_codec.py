"""A recorded build encoded straight from its prompt: the row ``encode_one`` writes for its
``ManifestRecord``, byte for byte, without making that record's manifest.

The builds of one Harness share their layers (the assembly cache hands every build whose
layer differs at most in its units' times the same layer manifest), so the encoded parts of
the last build's layers, its texts, budgets and strategies are kept by those very objects
(``Written.shared``); a build whose layers are them makes only its own header (ids, times,
digest, its units' times) and its settings, compared with the last build's::

    from harness.manifests._codec import Written
    from harness.manifests._prompt_codec import encode_prompt

    encoded = encode_prompt(record, Written())   # record: a PromptRecord
    # == encode_one(record.manifest_record(), Written()): row, parts and texts

A build whose layers are not memoised (no assembly cache, a large layer) is encoded through
its ``ManifestRecord``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from harness.manifests._codec import (
    _OBSERVED,
    _PER_BUILD,
    _SETTINGS,
    Encoded,
    Written,
    _json,
    _without_volatile,
    check_columns,
    encode_one,
)
from harness.manifests._record import PromptRecord, harness_version
from harness.prompt_assembler import AssembledPrompt, LayerManifest
from harness.prompt_assembler._shared import (
    Entries,
    digest_as,
    entries,
    input_texts,
    layer_times,
    manifest_fields,
    shared_layers,
)

__all__ = ["encode_prompt"]


@dataclass(slots=True)
class _Shared:
    """What the builds of the same layer manifests share: their parts, texts, budgets and
    strategies, and the last settings part (with every part, in ``encode_one``'s order)."""

    layers: tuple[LayerManifest, ...]  # held, so that ``is`` cannot see a reused id
    layer_parts: dict[str, bytes]
    addresses: list[str]
    texts: dict[str, str]
    budgets: dict[str, int]
    strategies: dict[str, str]
    entries: Entries  # what layer_times reads of the layers
    text: str | None = None  # the last prompt's text, and its digest
    digest: str = ""
    settings: dict[str, Any] | None = None
    parts: dict[str, bytes] | None = None  # the settings part, then the layers'
    times: dict[str, tuple[list[datetime | None], list[str | None]]] = field(
        default_factory=dict
    )  # ``layer_times``'s memo

    @classmethod
    def of(
        cls, prompt: AssembledPrompt, layers: tuple[LayerManifest, ...], written: Written
    ) -> _Shared:
        layer_parts: dict[str, bytes] = {}
        addresses: list[str] = []
        for layer in layers:
            stripped, _ = _without_volatile(layer.to_dict())
            address, compressed = written.part_address(layer.name, stripped)
            layer_parts.setdefault(address, compressed)
            addresses.append(address)
        return cls(
            layers,
            layer_parts,
            addresses,
            input_texts(prompt, layers),
            {layer.name: layer.budget for layer in layers},
            {layer.name: layer.strategy for layer in layers},
            entries(layers),
        )

    def holds(self, layers: tuple[LayerManifest, ...]) -> bool:
        mine = self.layers
        if len(mine) != len(layers):
            return False
        return all([a is b for a, b in zip(mine, layers, strict=True)])


def encode_prompt(record: PromptRecord, written: Written) -> Encoded:
    """``encode_one(record.manifest_record(), written)``, from the layers ``record`` shares with
    the last build ``written`` encoded this way; ``ManifestStoreError`` for a record no store
    can hold. Pure but for ``written``'s memos."""
    prompt = record.prompt
    layers = shared_layers(prompt)
    if layers is None:
        return encode_one(record.manifest_record(), written)
    shared = written.shared
    if not isinstance(shared, _Shared) or not shared.holds(layers):
        shared = written.shared = _Shared.of(prompt, layers, written)
    shared.text, shared.digest = prompt.text, digest_as(prompt, shared.text, shared.digest)
    fields = manifest_fields(prompt)  # then what ManifestRecord.of adds, in its order
    fields["manifest_id"] = record.manifest_id
    fields["harness_version"] = harness_version()
    fields["requested_at"] = record.requested_at.isoformat()
    fields["workspace"] = record.workspace
    fields["agent"] = record.agent
    fields["project_id"] = record.project_id
    fields["targets"] = list(record.targets)
    fields["imports"] = {
        unit: [list(pair) for pair in pairs] for unit, pairs in (record.imports or {}).items()
    }
    fields["tokenizer_spec"] = record.tokenizer_spec
    fields["budgets"] = shared.budgets
    fields["strategies"] = shared.strategies
    if record.sections:  # their names were checked by PromptRecord
        fields.update(record.sections)
    check_columns(fields)
    header = {key: fields.pop(key) for key in _PER_BUILD if key in fields}
    settings = fields  # all but the header's keys (and the layers, never in it)
    parts = shared.parts
    if parts is None or shared.settings != settings:
        address, compressed = written.part_address(_SETTINGS, settings)
        parts = {address: compressed}
        for address in shared.addresses:
            parts.setdefault(address, shared.layer_parts[address])
        shared.settings, shared.parts = settings, parts
    header["settings"] = next(iter(parts))
    header["layers"] = shared.addresses
    observed = layer_times(prompt, shared.entries, shared.times)
    if observed:
        header[_OBSERVED] = observed
    row = (
        record.manifest_id,
        header["requested_at"],
        record.agent,
        record.project_id,
        record.workspace,
        header["digest"],
        _json(header),
    )
    return Encoded(row, parts, shared.texts)
