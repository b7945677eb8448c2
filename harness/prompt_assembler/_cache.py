"""The memos an owner of many builds keeps between them: unit texts' digests, layer manifests
and their dicts.

``assemble`` is pure and caches nothing unless it is given a cache; a ``Harness`` owns one and
drops it when it is left, so no prompt text outlives the builds that used it::

    from harness.prompt_assembler import AssemblyCache, assemble

    cache = AssemblyCache()
    first = assemble({"identity": "You are the reviewer."}, cache=cache)
    again = assemble({"identity": "You are the reviewer."}, cache=cache)
    assert again.manifest_record().layers[0] is first.manifest_record().layers[0]
    cache.clear()

Every memo answers a key only with the value computed for an equal key (a text's own digest,
a manifest built from values that are all in its key), and holds a bounded amount of text.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from harness.prompt_assembler._manifest import LayerManifest
from harness.prompt_assembler._memo import Memo
from harness.prompt_assembler._render import sha256

__all__ = ["AssemblyCache"]

_LONGEST_TEXT = 256 * 1024
"""Longer texts are hashed every time (hashing dominates their cost; they would crowd the memo)."""
_TEXT_ENTRY_COST = 64
_LAYER_ENTRY_COST = 512


class AssemblyCache:
    """Bounded memos shared by the builds of one owner; thread-safe, cleared by ``clear()``.

    ``text_chars`` bounds the characters of unit text held for digests, ``layer_chars`` those
    held by memoised layer manifests.
    """

    __slots__ = ("__weakref__", "_dicts", "_digests", "_layers")

    def __init__(
        self, *, text_chars: int = 8 * 1024 * 1024, layer_chars: int = 4 * 1024 * 1024
    ) -> None:
        self._digests: Memo[str, str] = Memo(max_size=text_chars)
        self._layers: Memo[Hashable, LayerManifest] = Memo(max_size=layer_chars)
        self._dicts: dict[str, tuple[LayerManifest, dict[str, Any]]] = {}

    def __repr__(self) -> str:
        return f"<AssemblyCache {len(self._digests)} digests, {len(self._layers)} layer manifests>"

    def text_sha256(self, text: str) -> str:
        """sha256 hex of ``text`` as UTF-8, remembered for texts up to 256 Ki characters."""
        digest = self._digests.get(text)
        if digest is None:
            digest = sha256(text)
            if len(text) <= _LONGEST_TEXT:
                self._digests.put(text, digest, len(text) + _TEXT_ENTRY_COST)
        return digest

    def known_layer(self, key: Hashable) -> LayerManifest | None:
        """The manifest memoised for ``key``, or None."""
        return self._layers.get(key)

    def layer_manifest(
        self, key: Hashable, chars: int, units: int, build: Callable[[], LayerManifest]
    ) -> LayerManifest:
        """The manifest memoised for ``key``, else ``build()`` remembered (``chars``: unit text
        it holds; ``units``: how many units)."""
        layer = self._layers.get(key)
        if layer is None:
            layer = build()
            self._layers.put(key, layer, chars + _LAYER_ENTRY_COST * (units + 1))
        return layer

    def layer_dict(self, layer: LayerManifest) -> dict[str, Any]:
        """``layer.to_dict()``, the very dict of the last call when ``layer`` is the same object
        (a memoised manifest): never change the dict returned."""
        last = self._dicts.get(layer.name)
        if last is not None and last[0] is layer:
            return last[1]
        data = layer.to_dict()
        self._dicts[layer.name] = (layer, data)
        return data

    def clear(self) -> None:
        """Forget everything held."""
        self._digests = Memo(max_size=self._digests.max_size)
        self._layers = Memo(max_size=self._layers.max_size)
        self._dicts = {}
