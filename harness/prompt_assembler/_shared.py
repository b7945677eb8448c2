"""What a recorded build's row is made of, without building its manifest: the layer manifests
it shares with earlier builds, its units' own times, and the manifest's other fields.

A recording ``Harness`` encodes every build; the builds of a workspace share their layers
(the assembly cache memoises a layer's manifest by everything but its units' times), so the
encoder keeps the encoded form of the last build's layers by the very objects, and a build
whose layers are those objects only encodes its own fields and times::

    from harness.prompt_assembler import AssemblyCache, assemble
    from harness.prompt_assembler._shared import entries, layer_times, manifest_fields
    from harness.prompt_assembler._shared import shared_layers

    cache = AssemblyCache()
    prompt = assemble({"identity": "You are the reviewer."}, cache=cache)
    layers = shared_layers(prompt)      # None without a cache, or for a large layer
    assert layers is not None and layers == prompt.manifest_record().layers
    assert layer_times(prompt, entries(layers), {}) == {}
    assert manifest_fields(prompt)["digest"] == prompt.digest

Each answer is what ``prompt.manifest_record().to_dict()`` holds: ``shared_layers``'s layers
are that manifest's but for the ``observed_at`` of their entries, which ``layer_times`` gives
as the manifest's layer dicts hold them.
"""

from __future__ import annotations

from datetime import datetime
from operator import is_
from typing import Any

from harness.prompt_assembler._layout import layout_names
from harness.prompt_assembler._manifest import SCHEMA_VERSION, LayerManifest, manifest_dict
from harness.prompt_assembler._prompt import AssembledPrompt, memoised_layer, texts_by_digest
from harness.prompt_assembler._values import LAYER_SEPARATOR, TRUNCATION_MARKER, UNIT_SEPARATOR
from harness.prompt_assembler.strategies.layer import byte_exact

__all__ = [
    "Entries",
    "digest_as",
    "entries",
    "input_texts",
    "layer_times",
    "manifest_fields",
    "shared_layers",
]

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


Entries = tuple[tuple[int, str, tuple[int, ...]], ...]
"""For each layer with entries: its position, its name, and the index among its inputs of
each entry, kept units then dropped ones (``entries``)."""


def entries(layers: tuple[LayerManifest, ...]) -> Entries:
    """What ``layer_times`` reads of ``layers``, taken once for all the builds sharing them."""
    found = []
    for position, layer in enumerate(layers):
        indexes = tuple([entry.index for entry in (*layer.units, *layer.dropped_units)])
        if indexes:
            found.append((position, layer.name, indexes))
    return tuple(found)


def layer_times(
    prompt: AssembledPrompt,
    entries: Entries,
    memo: dict[str, tuple[list[datetime | None], list[str | None]]],
) -> dict[str, list[str | None]]:
    """By layer name, the ``observed_at`` of each entry (``entries`` of the layers
    ``shared_layers`` gave) as this build's units carry it, ISO 8601; a layer none of whose
    entries has a time is left out.

    ``memo`` (the caller's, by layer name) keeps the last times and their text: a layer
    whose units carry the very time objects of the last call (files read once, for many
    builds) is not formatted again (formatting is most of this function's cost)."""
    found: dict[str, list[str | None]] = {}
    trims = prompt._trims
    for position, name, indexes in entries:
        units = trims[position][0]
        times = [units[index].observed_at for index in indexes]
        if times.count(None) == len(times):
            continue
        last = memo.get(name)
        if last is not None and len(last[0]) == len(times) and all(map(is_, last[0], times)):
            found[name] = last[1]
            continue
        text = [None if time is None else time.isoformat() for time in times]
        memo[name] = (times, text)
        found[name] = text
    return found


def input_texts(prompt: AssembledPrompt, layers: tuple[LayerManifest, ...]) -> dict[str, str]:
    """``prompt.input_texts()``, read through ``layers`` (``shared_layers``)."""
    return texts_by_digest(layers, prompt._trims)


def digest_as(prompt: AssembledPrompt, text: str | None, digest: str) -> str:
    """``prompt.digest``, which is ``digest`` when ``prompt.text`` equals ``text``, the text
    of an earlier prompt whose digest that is (None: no such prompt yet). The builds of a
    workspace are mostly of the same text, and comparing it costs far less than hashing it;
    the prompt keeps the digest as if it had computed it."""
    known: str | None = prompt.__dict__.get("digest")
    if known is None:
        if text is None or prompt.text != text:
            return prompt.digest
        prompt.__dict__["digest"] = known = digest  # what the cached property would hold
    return known


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
