"""Registry: find running actors by key (a session id, say), never a dead one.

Register a child through its spec, ``actor.child_spec(id=..., name=(registry, key))``, and it
is registered while each incarnation runs; ``lookup`` returns it only while it runs::

    import anyio
    from harness.runtime import Actor, Registry, Supervisor

    class Session(Actor):
        async def handle_call(self, msg):
            return f"session got {msg}"

    async def main() -> None:
        sessions = Registry()
        session = Session()
        async with Supervisor([session.child_spec(id="s1", name=(sessions, "s1"))]):
            found = sessions.lookup("s1")
            assert found is session
            print(await found.call("hello"))   # session got hello
        assert sessions.lookup("s1") is None   # stopped: gone from the registry

    anyio.run(main)

With ``keys="unique"`` (the default) a key holds one actor and registering a taken key
raises ``AlreadyRegistered``; with ``keys="duplicate"`` a key holds any number of actors
(``lookup_all``). A registration lasts as long as the incarnation that made it; an actor in
``terminate`` no longer runs, so it is no longer found.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal, TypeAlias

from harness.errors import ArgumentError
from harness.runtime._actor import Actor
from harness.runtime._errors import AlreadyRegistered

__all__ = ["Keys", "Registry"]

Keys: TypeAlias = Literal["unique", "duplicate"]


class Registry:
    """Actors by key; lookups check that the actor still runs."""

    __slots__ = ("_entries", "keys")

    def __init__(self, *, keys: Keys = "unique") -> None:
        if keys not in ("unique", "duplicate"):
            raise ArgumentError(f"keys must be 'unique' or 'duplicate', got {keys!r}")
        self.keys: Keys = keys
        # key -> the actors registered under it, in registration order (one for unique keys).
        self._entries: dict[Hashable, dict[Actor, None]] = {}

    def __repr__(self) -> str:
        return f"<Registry keys={self.keys} entries={len(self._entries)}>"

    def __len__(self) -> int:
        """How many keys hold at least one registration (running or starting)."""
        return len(self._entries)

    def register(self, key: Hashable, actor: Actor) -> None:
        """Register ``actor`` (starting or running) under ``key`` until its incarnation ends.

        ``NoProc`` if the actor is not alive; ``AlreadyRegistered`` if the key is unique and
        held by another actor. Registering the same actor twice under a key is a no-op.
        """
        holders = self._entries.get(key)
        if holders is not None and actor in holders:
            return
        if holders and self.keys == "unique":
            raise AlreadyRegistered(key, repr(next(iter(holders))))
        actor._registered(self, key)  # NoProc when no incarnation is alive
        if holders is None:
            self._entries[key] = {actor: None}
        else:
            holders[actor] = None

    def unregister(self, key: Hashable, actor: Actor | None = None) -> None:
        """Drop ``actor``'s registration under ``key`` (every one under it if no actor)."""
        holders = self._entries.get(key)
        if holders is None:
            return
        if actor is None:
            holders.clear()
        else:
            holders.pop(actor, None)
        if not holders:
            del self._entries[key]

    def lookup(self, key: Hashable) -> Actor | None:
        """The running actor under ``key`` (the first registered, for duplicate keys)."""
        holders = self._entries.get(key)
        if holders:
            for actor in holders:
                if actor._mailbox is not None:  # it runs: not starting, not in terminate
                    return actor
        return None

    def lookup_all(self, key: Hashable) -> tuple[Actor, ...]:
        """Every running actor under ``key``, in registration order."""
        holders = self._entries.get(key)
        if not holders:
            return ()
        return tuple(actor for actor in holders if actor._mailbox is not None)

    def keys_of(self, actor: Actor) -> list[Hashable]:
        """The keys ``actor`` is registered under (running or starting)."""
        return [key for key, holders in self._entries.items() if actor in holders]
