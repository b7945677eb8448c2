"""Digests of tool definitions: sha256 of their RFC 8785 canonical JSON.

::

    from harness.tools._digest import catalog_digest, tool_digest

    a = tool_digest({"name": "t", "inputSchema": {"type": "object"}})
    b = tool_digest({"inputSchema": {"type": "object"}, "name": "t"})
    assert a == b                                   # key order never matters
    assert catalog_digest({"t": a}) == catalog_digest(dict([("t", a)]))

RFC 8785 (JSON Canonicalization Scheme) fixes everything ``json.dumps(sort_keys=True)``
leaves open: number formatting (``1.0`` and ``1`` are one number), key order by UTF-16 code
units, and string escaping. So a definition the server sends, re-encoded by any conforming
client, digests the same. The canonicaliser is the ``rfc8785`` package (Trail of Bits, pure
Python, no dependencies, tested against the RFC's vectors).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import rfc8785

from harness.tools._errors import ToolCatalogError

__all__ = ["canonical_json", "catalog_digest", "frozen_json", "plain_json", "tool_digest"]


def canonical_json(value: Any, *, what: str) -> bytes:
    """``value`` as RFC 8785 canonical JSON (UTF-8 bytes).

    Raises ``ToolCatalogError`` naming ``what`` for a value JSON cannot hold exactly (a
    non-finite float, an integer beyond 2**53, a non-string key, an unknown type).
    """
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError, AttributeError) as exc:
        raise ToolCatalogError(
            f"{what}: not representable as canonical JSON ({exc}); send only JSON values "
            "(strings, finite numbers within 2**53, booleans, null, lists, objects with "
            "string keys)"
        ) from exc


def tool_digest(definition: Mapping[str, Any], *, what: str = "tool") -> str:
    """sha256 (hex) of the canonical JSON of a tool's whole definition."""
    return hashlib.sha256(canonical_json(definition, what=what)).hexdigest()


def catalog_digest(digests: Mapping[str, str]) -> str:
    """sha256 (hex) of the canonical JSON object {tool name: tool digest}.

    A JSON object has no order, so the digest depends on the set of (name, definition)
    pairs only: not on the order the tools were listed in, nor on how they were paged.
    """
    return hashlib.sha256(canonical_json(dict(digests), what="catalog")).hexdigest()


def plain_json(value: Any, *, what: str = "tool") -> Any:
    """A deep copy of ``value`` as plain JSON data (mappings to dicts, sequences to lists),
    which is what the canonicaliser takes; a non-string key raises ``ToolCatalogError``."""
    if isinstance(value, Mapping):
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ToolCatalogError(f"{what}: object key {key!r} is not a string")
            copied[key] = plain_json(item, what=what)
        return copied
    if isinstance(value, list | tuple):
        return [plain_json(item, what=what) for item in value]
    return value


def frozen_json(value: Any) -> Any:
    """A read-only view of plain JSON data (objects as mapping proxies, arrays as tuples), so
    a definition cannot drift away from the digest computed for it."""
    if isinstance(value, dict):
        return MappingProxyType({key: frozen_json(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(frozen_json(item) for item in value)
    return value
