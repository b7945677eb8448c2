"""Pinned tool definitions: where ``check`` and ``approve`` keep what the host has accepted.

::

    from harness.tools import PinStore, ToolCatalog, ToolPolicy

    async with await PinStore.open("pins.db") as pins:    # SQLite path (or postgresql:// URL)
        check = await pins.check(catalog, ToolPolicy({"repo": ["read_file"]}))
        print(check.allowed_names, [(c.name, c.kind, c.fields) for c in check.changes])
        await pins.approve(catalog, tools=["read_file"])   # accept its current definition

Pins are per (server, tool name). ``check`` records the pin of an allowed tool seen for the
first time (trust on first use), so from then on any change to its definition is caught;
a tool the policy does not allow is never pinned by ``check``. ``approve`` pins the current
definitions: of every tool in the catalog (and forgets the pins of tools it no longer lists),
or of the named tools only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Protocol

import anyio

from harness._closing import AsyncClosing
from harness.errors import ArgumentError
from harness.stores import register_store, store_factory, url_scheme
from harness.tools._catalog import Catalog
from harness.tools._check import CatalogCheck, Pin, classify
from harness.tools._errors import PinStoreError
from harness.tools._policy import ToolPolicy

__all__ = ["PinBackend", "PinStore", "open_backend"]


class PinBackend(Protocol):
    """Where pins live: ``harness.tools._sqlite`` or ``harness.tools._postgres``."""

    async def load(self, server: str) -> dict[str, Pin]: ...

    async def save(self, server: str, pins: dict[str, Pin], forget: Iterable[str] = ()) -> None: ...

    async def close(self) -> None: ...


for _scheme in ("postgresql", "postgres"):
    register_store(_scheme, "harness.tools._postgres:PostgresPins.open", kind="pins")


async def open_backend(target: str | os.PathLike[str]) -> PinBackend:
    """The one place a pin store's backend is chosen: a URL through the store registry
    (``postgresql://`` built in; ``harness.stores.register_store(..., kind="pins")`` adds
    more), anything else a SQLite path."""
    text = os.fspath(target)
    scheme = url_scheme(text)
    if scheme is not None:
        factory = store_factory(scheme, kind="pins", error=PinStoreError)
        backend: PinBackend = await factory(text)
        return backend
    from harness.tools._sqlite import SqlitePins

    return await SqlitePins.open(text)


class PinStore(AsyncClosing):
    """The pins of every server, opened with ``await PinStore.open(path_or_url)``; close with
    ``aclose()`` or use it as an async context manager."""

    def __init__(self, backend: PinBackend) -> None:
        self._backend = backend
        self._lock = anyio.Lock()  # a check's read and its first-use writes are one step
        self._closed = False

    @classmethod
    async def open(cls, target: str | os.PathLike[str]) -> PinStore:
        """Open the store at ``target``, creating a missing one (its directory must exist)."""
        return cls(await open_backend(target))

    async def check(self, catalog: Catalog, policy: ToolPolicy) -> CatalogCheck:
        """Judge ``catalog`` against ``policy`` and its server's pins; pin the allowed tools
        seen for the first time."""
        async with self._lock:
            self._require_open()
            pins = await self._backend.load(catalog.server)
            check = classify(catalog, policy, pins)
            first = {
                change.name: _pin_of(catalog, change.name)
                for change in check.changes
                if change.kind == "new"
            }
            if first:
                await self._backend.save(catalog.server, first)
            return check

    async def approve(self, catalog: Catalog, *, tools: Iterable[str] | None = None) -> None:
        """Pin the current definitions of ``tools`` (names; default: every tool listed, and
        the pins of tools no longer listed are dropped). A named tool the catalog does not
        list has its pin dropped (its removal is accepted); a name neither listed nor pinned
        raises ``ArgumentError``."""
        if isinstance(tools, str):
            raise ArgumentError(f"tools is the string {tools!r}; give a list of tool names")
        async with self._lock:
            self._require_open()
            listed = {entry.name for entry in catalog.tools}
            pinned = set(await self._backend.load(catalog.server))
            wanted = listed | pinned if tools is None else set(tools)
            unknown = sorted(wanted - listed - pinned)
            if unknown:
                raise ArgumentError(
                    f"server {catalog.server!r} neither lists nor has pins for {unknown}; "
                    f"approve names from its catalog: {sorted(listed)}"
                )
            names, forget = wanted & listed, wanted - listed
            pins = {name: _pin_of(catalog, name) for name in sorted(names)}
            await self._backend.save(catalog.server, pins, sorted(forget))

    async def aclose(self) -> None:
        """Close the store (idempotent)."""
        if not self._closed:
            self._closed = True
            await self._backend.close()

    def _require_open(self) -> None:
        if self._closed:
            raise PinStoreError("this pin store is closed; open it again with PinStore.open")


def _pin_of(catalog: Catalog, name: str) -> Pin:
    entry = catalog.get(name)
    assert entry is not None
    return Pin(entry.digest, entry.definition)
