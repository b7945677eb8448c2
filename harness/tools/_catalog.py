"""A server's tool catalog as discovered data: every definition, its digest, the catalog's.

::

    from harness.tools import ToolCatalog

    catalog = ToolCatalog.from_tools(
        "repo", [{"name": "read_file", "inputSchema": {"type": "object"}}]
    )
    print(catalog.digest, [(t.name, t.digest) for t in catalog.tools])
    # catalog = await ToolCatalog.from_mcp(session, server="repo")   # every page of tools/list

A tool's digest covers its whole definition (name, title, description, input and output
schemas, annotations and any other field), so a changed parameter description or a flipped
``destructiveHint`` changes it. The catalog's digest depends on the set of tools only, never on
their order or on how the server paged them. Nothing here grants anything: what may enter a
run is decided by a ``ToolPolicy`` and the pins (``harness.tools._pins``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from harness.tools._digest import (
    canonical_json,
    catalog_digest,
    frozen_json,
    plain_json,
    tool_digest,
)
from harness.tools._errors import ToolCatalogError

__all__ = ["Catalog", "HasSession", "ToolEntry", "ToolSource", "client_session"]

_MAX_PAGES = 10_000
"""A server that keeps handing out cursors past this many pages is refused (a loop)."""


class ToolSource(Protocol):
    """What ``from_mcp`` needs of a session: the SDK ``ClientSession.list_tools``."""

    async def list_tools(self, *, params: Any = None) -> Any: ...


class HasSession(Protocol):
    """An SDK ``Client``: ``from_mcp`` and ``watch`` use its ``ClientSession``."""

    @property
    def session(self) -> Any: ...


def client_session(session: ToolSource | HasSession) -> Any:
    """The ``ClientSession`` of an SDK ``Client``, or ``session`` itself (so listings never
    come from the ``Client``'s response cache)."""
    from mcp import Client

    return session.session if isinstance(session, Client) else session


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool of a catalog: its name, its definition as the server sent it (read-only:
    objects are mapping proxies, arrays tuples; ``plain()`` gives a mutable copy), its digest."""

    name: str
    definition: Mapping[str, Any]
    digest: str
    server: str

    def canonical_input_schema(self) -> str:
        """The input schema as canonical JSON text (what the ``tools`` layer renders)."""
        schema = self.definition.get("inputSchema", {})
        return canonical_json(plain_json(schema), what=self.name).decode("utf-8")

    def plain(self) -> dict[str, Any]:
        """The definition as plain JSON data (dicts and lists), a fresh copy."""
        value: dict[str, Any] = plain_json(self.definition)
        return value


@dataclass(frozen=True, slots=True)
class Catalog:
    """The tools one server offers, sorted by name, with the catalog's digest."""

    server: str
    tools: tuple[ToolEntry, ...]
    digest: str

    @classmethod
    def from_tools(cls, server: str, tools: Sequence[Mapping[str, Any] | Any]) -> Self:
        """A catalog of ``tools``: MCP ``Tool`` definitions as mappings in wire form
        (``inputSchema``, not ``input_schema``), or SDK ``Tool`` objects.

        Raises ``ToolCatalogError`` naming the tool for one without a name, one whose
        ``inputSchema`` is missing or not an object, a name given twice, or a value JSON
        cannot hold.
        """
        if not isinstance(server, str) or not server:
            raise ToolCatalogError(f"server must be a non-empty str naming it, got {server!r}")
        entries: dict[str, ToolEntry] = {}
        for index, tool in enumerate(tools):
            entry = _entry(server, index, _wire(tool))
            if entry.name in entries:
                raise ToolCatalogError(
                    f"server {server!r} lists tool {entry.name!r} twice; a tool name must be "
                    "unique on its server (fix the server, or connect to it under two names)"
                )
            entries[entry.name] = entry
        ordered = tuple(entries[name] for name in sorted(entries))
        digest = catalog_digest({entry.name: entry.digest for entry in ordered})
        return cls(server=server, tools=ordered, digest=digest)

    @classmethod
    async def from_mcp(cls, session: ToolSource | HasSession, *, server: str) -> Self:
        """Every page of ``tools/list`` from an initialized SDK ``ClientSession`` (or the
        session of an entered SDK ``Client``).

        Each tool is taken as the server sent it (the fields it set, in wire form), so its
        digest equals that of ``from_tools`` on the same definition.
        """
        from mcp_types import PaginatedRequestParams

        source = client_session(session)
        tools: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
            result = await source.list_tools(params=params)
            tools.extend(result.tools)
            cursor = result.next_cursor
            if cursor is None:
                return cls.from_tools(server, tools)
            if cursor in seen:
                raise ToolCatalogError(
                    f"server {server!r} returned the tools/list cursor {cursor!r} twice; its "
                    "pagination loops, so its catalog cannot be read whole (fix the server)"
                )
            seen.add(cursor)
        raise ToolCatalogError(
            f"server {server!r} paged tools/list past {_MAX_PAGES} pages; refusing to read on"
        )

    def get(self, name: str) -> ToolEntry | None:
        """The tool called ``name``, or None."""
        for entry in self.tools:
            if entry.name == name:
                return entry
        return None


def _wire(tool: Mapping[str, Any] | Any) -> Any:
    """A definition in wire form: an SDK model dumped with the fields it was given."""
    dump = getattr(tool, "model_dump", None)
    if dump is not None and not isinstance(tool, Mapping):
        return dump(by_alias=True, exclude_unset=True, mode="json")
    return tool


def _entry(server: str, index: int, tool: Any) -> ToolEntry:
    if not isinstance(tool, Mapping):
        raise ToolCatalogError(
            f"server {server!r}: tool #{index} is a {type(tool).__name__}, not an object; "
            "pass MCP Tool definitions (mappings or SDK Tool objects)"
        )
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCatalogError(
            f"server {server!r}: tool #{index} has no name (got {name!r}); every tool needs "
            "a non-empty string name"
        )
    if not isinstance(tool.get("inputSchema"), Mapping):
        raise ToolCatalogError(
            f"server {server!r}: tool {name!r} has no inputSchema object (got "
            f"{type(tool.get('inputSchema')).__name__}); an MCP tool's inputSchema is a JSON "
            'Schema object such as {"type": "object"}'
        )
    what = f"server {server!r}: tool {name!r}"
    plain = plain_json(tool, what=what)
    frozen = frozen_json(plain)
    return ToolEntry(
        name=name, definition=frozen, digest=tool_digest(plain, what=what), server=server
    )
