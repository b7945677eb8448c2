"""What a catalog may contribute to a run, given the host's policy and the pinned definitions.

::

    from harness.tools import ToolCatalog, ToolPolicy
    from harness.tools._check import classify

    catalog = ToolCatalog.from_tools("repo", [{"name": "t", "inputSchema": {"type": "object"}}])
    check = classify(catalog, ToolPolicy({"repo": ["t"]}), pins={})
    assert [t.name for t in check.allowed] == ["t"] and check.changes[0].kind == "new"

The rules, in order, per tool: a tool the policy does not name for its server is blocked
(``not_allowed``), whatever its annotations say. An allowed tool with no pin is allowed and
reported ``new`` (trust on first use). An allowed tool whose digest differs from its pin is a
``changed`` tool, classified by the top-level fields that differ; under ``on_change="block"``
it is blocked (``changed``) until approved, under ``"warn"`` allowed and reported. A pinned
tool the catalog no longer lists is reported ``removed``. ``classify`` is pure; the pin store
(``harness.tools._pins``) reads the pins and records first-use ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harness.tools._catalog import Catalog, ToolEntry
from harness.tools._digest import canonical_json, plain_json
from harness.tools._policy import ToolPolicy

__all__ = [
    "BlockReason",
    "BlockedTool",
    "CatalogCheck",
    "ChangeKind",
    "Pin",
    "ToolChange",
    "classify",
    "pin_rows",
]

ChangeKind = Literal["new", "changed", "removed"]
BlockReason = Literal["not_allowed", "changed"]


@dataclass(frozen=True, slots=True)
class Pin:
    """An approved definition of one tool: its digest and the definition itself (so a later
    change can be told field by field)."""

    digest: str
    definition: Mapping[str, Any]


def pin_rows(server: str, pins: Mapping[str, Pin]) -> list[tuple[str, str, str, str]]:
    """``pins`` as the rows every pin store writes: (server, name, digest, canonical JSON)."""
    return [
        (
            server,
            name,
            pin.digest,
            canonical_json(plain_json(pin.definition), what=name).decode(),
        )
        for name, pin in pins.items()
    ]


@dataclass(frozen=True, slots=True)
class ToolChange:
    """How a tool differs from its pin. ``fields``: the top-level fields that differ (sorted;
    empty for ``new`` and ``removed``). ``digest`` is None for a removed tool, ``pinned`` None
    for a new one."""

    name: str
    kind: ChangeKind
    fields: tuple[str, ...] = ()
    digest: str | None = None
    pinned: str | None = None


@dataclass(frozen=True, slots=True)
class BlockedTool:
    """A listed tool kept out of the run, and why (``fields`` for a ``changed`` one)."""

    name: str
    reason: BlockReason
    digest: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CatalogCheck:
    """One catalog judged against a policy and the pins: what a run may see of it.

    ``allowed`` (sorted by name) is all the ``tools`` layer renders. ``trusted`` says whether
    the server's text is rendered as trusted. A check never changes: a newer catalog gives a
    new check, and a run sees it only when it is handed that check.
    """

    server: str
    digest: str
    catalog: Catalog
    allowed: tuple[ToolEntry, ...]
    blocked: tuple[BlockedTool, ...]
    changes: tuple[ToolChange, ...]
    trusted: bool

    @property
    def allowed_names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.allowed)

    def record(self) -> dict[str, Any]:
        """The check as JSON data, for a manifest: the catalog digest, each allowed tool's
        digest, each blocked tool with its reason, each change."""
        return {
            "server": self.server,
            "digest": self.digest,
            "trusted": self.trusted,
            "tools": {entry.name: entry.digest for entry in self.allowed},
            "blocked": [
                {"name": b.name, "reason": b.reason, "digest": b.digest, "fields": list(b.fields)}
                for b in self.blocked
            ],
            "changes": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "fields": list(c.fields),
                    "digest": c.digest,
                    "pinned": c.pinned,
                }
                for c in self.changes
            ],
        }


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """The top-level fields whose values differ (present in one only, or with another
    canonical JSON: ``true`` and ``1`` differ here as in the digest), sorted."""
    return tuple(sorted(key for key in {*old, *new} if _value(old, key) != _value(new, key)))


def _value(definition: Mapping[str, Any], key: str) -> bytes | None:
    if key not in definition:
        return None
    return canonical_json(plain_json(definition[key]), what=key)


def classify(catalog: Catalog, policy: ToolPolicy, pins: Mapping[str, Pin]) -> CatalogCheck:
    """Judge ``catalog`` against ``policy`` and its server's ``pins`` (by tool name)."""
    server = catalog.server
    allowed: list[ToolEntry] = []
    blocked: list[BlockedTool] = []
    changes: list[ToolChange] = []
    for entry in catalog.tools:
        if not policy.allows(server, entry.name):
            blocked.append(BlockedTool(entry.name, "not_allowed", entry.digest))
            continue
        pin = pins.get(entry.name)
        if pin is None:
            changes.append(ToolChange(entry.name, "new", digest=entry.digest))
            allowed.append(entry)
            continue
        if pin.digest == entry.digest:
            allowed.append(entry)
            continue
        fields = changed_fields(pin.definition, entry.definition)
        changes.append(ToolChange(entry.name, "changed", fields, entry.digest, pin.digest))
        if policy.on_change == "warn":
            allowed.append(entry)
        else:
            blocked.append(BlockedTool(entry.name, "changed", entry.digest, fields))
    listed = {entry.name for entry in catalog.tools}
    for name in sorted(set(pins) - listed):
        changes.append(ToolChange(name, "removed", pinned=pins[name].digest))
    return CatalogCheck(
        server=server,
        digest=catalog.digest,
        catalog=catalog,
        allowed=tuple(allowed),
        blocked=tuple(blocked),
        changes=tuple(sorted(changes, key=lambda change: change.name)),
        trusted=policy.trusts(server),
    )
