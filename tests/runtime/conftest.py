"""Helpers for the runtime tests: scripted children whose life the test drives with events."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from harness.runtime import ChildSpec


class Crash(Exception):
    """The abnormal exit a test asks a child for."""


class StartFailure(Exception):
    """Raised by a child's start function before it signals ready."""


class _Ctl:
    def __init__(self) -> None:
        self.starts = 0  # start attempts, also each incarnation's identity
        self.ready = 0  # incarnations that signalled ready
        self.fail_starts = 0  # fail this many of the next start attempts
        self.start_gate: anyio.Event | None = None  # if set, a start waits for it first
        self.command: anyio.Event = anyio.Event()
        self.action = "normal"
        self.changed = anyio.Event()

    def bump(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


class Tracker:
    """Makes ChildSpecs and records ("start"|"ready"|"stop"|"exit", id) in order.

    Test modules cannot import conftest under --import-mode=importlib, so the helpers they
    need ride on this fixture object.
    """

    Crash = Crash
    StartFailure = StartFailure

    @staticmethod
    def live_tasks() -> set[asyncio.Task[Any]]:
        return {t for t in asyncio.all_tasks() if not t.done()}

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.ctl: dict[str, _Ctl] = {}

    def spec(
        self,
        id: str,
        *,
        restart: Any = "permanent",
        shutdown: Any = 5.0,
        on_cancel: Callable[[], Any] | None = None,
    ) -> ChildSpec:
        ctl = self.ctl.setdefault(id, _Ctl())

        async def start(task_status: Any) -> None:
            ctl.starts += 1
            self.events.append(("start", id))
            ctl.bump()
            if ctl.start_gate is not None:
                await ctl.start_gate.wait()
            if ctl.fail_starts > 0:
                ctl.fail_starts -= 1
                ctl.bump()
                raise StartFailure(id)
            ctl.command = anyio.Event()
            ctl.action = "normal"
            task_status.started()
            self.events.append(("ready", id))
            ctl.ready += 1
            ctl.bump()
            try:
                await ctl.command.wait()
            except anyio.get_cancelled_exc_class():
                self.events.append(("stop", id))
                if on_cancel is not None:
                    await on_cancel()
                raise
            self.events.append(("exit", id))
            if ctl.action == "crash":
                raise Crash(id)

        return ChildSpec(id, start, restart=restart, shutdown=shutdown)

    def crash(self, id: str) -> None:
        self.ctl[id].action = "crash"
        self.ctl[id].command.set()

    def exit_normally(self, id: str) -> None:
        self.ctl[id].action = "normal"
        self.ctl[id].command.set()

    async def wait_ready(self, id: str, count: int) -> None:
        """Wait until ``id`` signalled ready ``count`` times in total."""
        ctl = self.ctl[id]
        while ctl.ready < count:
            await ctl.changed.wait()

    async def wait_starts(self, id: str, count: int) -> None:
        ctl = self.ctl[id]
        while ctl.starts < count:
            await ctl.changed.wait()

    def starts(self, id: str) -> int:
        return self.ctl[id].starts

    def of(self, kind: str) -> list[str]:
        return [child for event, child in self.events if event == kind]


@pytest.fixture
def tracker() -> Tracker:
    return Tracker()


class SupervisionLog(logging.Handler):
    """Collects the runtime's (event, child_id) log records and lets a test await one.

    The supervisor updates its bookkeeping synchronously right around each record, so waiting
    for a record is an event-driven way to know the supervisor has caught up.
    """

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, str]] = []
        self._changed: anyio.Event | None = None

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "event", None)
        if event is not None:
            self.records.append((event, getattr(record, "child_id", "")))
        if self._changed is not None:
            self._changed.set()

    def count(self, event: str, child_id: str) -> int:
        return self.records.count((event, child_id))

    async def wait(self, event: str, child_id: str, count: int = 1) -> None:
        """Wait until ``event`` was logged for ``child_id`` ``count`` times in total."""
        while self.count(event, child_id) < count:
            self._changed = anyio.Event()
            await self._changed.wait()


@pytest.fixture
def supervision_log() -> Iterator[SupervisionLog]:
    handler = SupervisionLog()
    logger = logging.getLogger("harness.runtime")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
