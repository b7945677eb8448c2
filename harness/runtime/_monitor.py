"""monitor: learn when an actor's incarnation ends, and why, without sharing its fate.

A web handler watching a session, say: the watcher is told, never cancelled::

    import anyio
    from harness.runtime import Actor, Supervisor, monitor

    class Job(Actor):
        async def handle_cast(self, msg):
            self.stop()                       # a normal exit after this message

    async def main() -> None:
        job = Job()
        async with Supervisor([job.child_spec(id="job", restart="transient")]):
            watch = monitor(job)
            job.cast("done")
            print(await watch.down())         # normal

    anyio.run(main)

``down()`` returns the exit reason: the exception for a crash, ``"normal"`` for a normal exit,
``"shutdown"`` when its supervisor stopped it. A monitor watches the incarnation that was
alive when it was made; monitoring an actor that is not alive resolves at once with a
``NoProc`` exception as the reason.
"""

from __future__ import annotations

import anyio

from harness.runtime._actor import Actor, ExitReason
from harness.runtime._errors import NoProc

__all__ = ["Monitor", "monitor"]


class Monitor:
    """One watch on one actor incarnation; ``await down()`` for its exit reason."""

    __slots__ = ("_done", "_reason", "actor")

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self._done = anyio.Event()
        self._reason: ExitReason = "normal"

    def __repr__(self) -> str:
        state = f"down ({self._reason!r})" if self._done.is_set() else "watching"
        return f"<Monitor of {self.actor!r}: {state}>"

    @property
    def is_down(self) -> bool:
        return self._done.is_set()

    async def down(self) -> ExitReason:
        """Wait until the watched incarnation has ended; its exit reason."""
        await self._done.wait()
        return self._reason

    def _down(self, reason: ExitReason) -> None:
        if not self._done.is_set():
            self._reason = reason
            self._done.set()


def monitor(actor: Actor) -> Monitor:
    """Watch ``actor``'s current incarnation (see the module docstring)."""
    watch = Monitor(actor)
    if not actor._notify_on_exit(watch._down):
        watch._down(NoProc(repr(actor)))
    return watch
