"""What a recorded build's row is made of, without building its manifest: the layer manifests
it shares with earlier builds, its units' own times, and the manifest's other fields.

A recording ``Harness`` encodes every build; the builds of a workspace share their layers
(the assembly cache memoises a layer's manifest by everything but its units' times), so the
encoder keeps the encoded form of the last build's layers by the very objects, and a build
whose layers are those objects only encodes its own fields and times::

    from harness.prompt_assembler import AssemblyCache, assemble
    from harness.prompt_assembler._shared import layer_times, manifest_fields, shared_layers

    cache = AssemblyCache()
    prompt = assemble({"identity": "You are the reviewer."}, cache=cache)
    layers = shared_layers(prompt)      # None without a cache, or for a large layer
    assert layers is not None and layers == prompt.manifest_record().layers
    assert layer_times(prompt, layers) == {}
    assert manifest_fields(prompt)["digest"] == prompt.digest

Each answer is what ``prompt.manifest_record().to_dict()`` holds: ``shared_layers``'s layers
are that manifest's but for the ``observed_at`` of their entries, which ``layer_times`` gives
as the manifest's layer dicts hold them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from harness.prompt_assembler._layout import layout_names
from harness.prompt_assembler._manifest import SCHEMA_VERSION, LayerManifest, manifest_dict
from harness.prompt_assembler._prompt import AssembledPrompt, memoised_layer
from harness.prompt_assembler._values import LAYER_SEPARATOR, TRUNCATION_MARKER, UNIT_SEPARATOR
from harness.prompt_assembler.strategies.layer import byte_exact

__all__ = ["input_texts", "layer_times", "manifest_fields", "shared_layers"]

_SEPARATORS = (LAYER_SEPARATOR, UNIT_SEPARATOR, TRUNCATION_MARKER)


def shared_layers(prompt: AssembledPrompt) -> tuple[LayerManifest, ...] | None:
    """Each layer's memoised manifest (the same objects for builds that differ at most in
    their units' times), or None when one is not memoised: no assembly cache, a tokenizer
    that does not count bytes, or a layer too large for the memo."""
    cache, tokenizer = prompt._cache, prompt._tokenizer
    bpt = byte_exact(tokenizer)
    if cache is None or bpt is None:
        return None
    count, digest = tokenizer.count, cache.text_sha256
    layers = []
    for index in range(len(prompt._trims)):
        layer = memoised_layer(prompt, index, count, bpt, digest)
        if layer is None:
            return None
        layers.append(layer)
    return tuple(layers)


def layer_times(
    prompt: AssembledPrompt,
    layers: tuple[LayerManifest, ...],
    memo: dict[str, tuple[list[datetime | None], list[str | None]]] | None = None,
) -> dict[str, list[str | None]]:
    """By layer name, the ``observed_at`` of each entry of ``layers`` (kept units, then
    dropped ones) as this build's units carry it, ISO 8601; a layer none of whose entries
    has a time is left out.

    ``memo`` (the caller's, by layer name) keeps the last times and their text: a layer
    whose units carry the very time objects of the last call (files read once, for many
    builds) is not formatted again (formatting is most of this function's cost)."""
    found: dict[str, list[str | None]] = {}
    for layer, trim in zip(layers, prompt._trims, strict=True):
        units = trim[0]
        times = [units[entry.index].observed_at for entry in layer.units]
        if layer.dropped_units:
            times += [units[entry.index].observed_at for entry in layer.dropped_units]
        if times.count(None) == len(times):
            continue
        last = None if memo is None else memo.get(layer.name)
        if (
            last is not None
            and len(last[0]) == len(times)
            and all([a is b for a, b in zip(last[0], times, strict=True)])
        ):
            found[layer.name] = last[1]
            continue
        text = [None if time is None else time.isoformat() for time in times]
        if memo is not None:
            memo[layer.name] = (times, text)
        found[layer.name] = text
    return found


def input_texts(prompt: AssembledPrompt, layers: tuple[LayerManifest, ...]) -> dict[str, str]:
    """``prompt.input_texts()``, read through ``layers`` (``shared_layers``)."""
    texts: dict[str, str] = {}
    for layer, trim in zip(layers, prompt._trims, strict=True):
        units = trim[0]
        for entry in layer.units:
            texts[entry.sha256] = units[entry.index].text
        for dropped in layer.dropped_units:
            texts[dropped.sha256] = units[dropped.index].text
    return texts


def manifest_fields(prompt: AssembledPrompt) -> dict[str, Any]:
    """The fields of ``prompt.manifest_record().to_dict()`` but ``layers``."""
    return manifest_dict(
        SCHEMA_VERSION,
        prompt.digest,
        prompt.tokens,
        prompt.estimated,
        prompt.tokenizer_name,
        layout_names(prompt._layout),
        _SEPARATORS,
        None,
        prompt._now,
        prompt._request,
        prompt.loans,
    )
