"""What a supervised child is: the spec that says how to run it, and the snapshot of one.

A ``ChildSpec`` names a child, the async function that runs it, and what to do when it exits;
``Supervisor.which_children()`` answers with one ``ChildInfo`` per child::

    import anyio
    from harness.runtime import ChildSpec, Supervisor

    async def worker(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await anyio.sleep_forever()

    async def main() -> None:
        spec = ChildSpec("worker", worker, restart="transient", shutdown=1.0)
        async with Supervisor([spec]) as sup:
            print(sup.which_children())  # [ChildInfo(id='worker', status='running', restarts=0)]

    anyio.run(main)
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from anyio.abc import TaskStatus

from harness.errors import ArgumentError, ArgumentTypeError

__all__ = [
    "ChildInfo",
    "ChildSpec",
    "Restart",
    "RestartStrategy",
    "Shutdown",
    "StartFunction",
    "Status",
]

Restart: TypeAlias = Literal["permanent", "transient", "temporary"]
Shutdown: TypeAlias = float | Literal["brutal"] | None
RestartStrategy: TypeAlias = Literal["one_for_one", "one_for_all", "rest_for_one"]
Status: TypeAlias = Literal["running", "restarting", "stopped"]
StartFunction: TypeAlias = Callable[[TaskStatus[Any]], Awaitable[object]]

RESTARTS: Final = ("permanent", "transient", "temporary")
STRATEGIES: Final = ("one_for_one", "one_for_all", "rest_for_one")


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to start one child and what to do when it exits.

    ``start`` is an async callable taking ``task_status``: it calls ``task_status.started()``
    once ready, then runs until it returns (a normal exit) or raises (an abnormal exit).
    ``shutdown`` bounds how long stopping it may take: seconds, ``None`` (wait forever) or
    ``"brutal"`` (cancel without waiting).
    """

    id: str
    start: StartFunction
    restart: Restart = field(default="permanent", kw_only=True)
    shutdown: Shutdown = field(default=5.0, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ArgumentError(f"ChildSpec id must be a non-empty string, got {self.id!r}")
        if not callable(self.start):
            raise ArgumentTypeError(f"ChildSpec {self.id!r}: start must be an async callable")
        if self.restart not in RESTARTS:
            raise ArgumentError(
                f"ChildSpec {self.id!r}: restart must be one of {RESTARTS}, got {self.restart!r}"
            )
        shutdown = self.shutdown
        if shutdown is None or shutdown == "brutal":
            return
        if (
            isinstance(shutdown, bool)
            or not isinstance(shutdown, int | float)
            or math.isnan(shutdown)
            or shutdown < 0
        ):
            raise ArgumentError(
                f"ChildSpec {self.id!r}: shutdown must be seconds >= 0, None (wait forever) "
                f"or 'brutal', got {shutdown!r}"
            )


@dataclass(frozen=True, slots=True)
class ChildInfo:
    """A snapshot of one child, as ``which_children()`` reports it.

    ``restarts`` counts how often the supervisor started this child again after its first
    start (automatic restarts, sibling restarts under one_for_all/rest_for_one, restart_child).
    """

    id: str
    status: Status
    restarts: int
