"""The supervised LISTEN connection that tells this node's cache which rows changed.

``PostgresInstructionStore.child_specs(events)`` returns this child; the Harness tree runs it::

    listener = Listener(url, events, state, heartbeat=5.0, connect_timeout=5.0)
    async with Supervisor([listener.child_spec()]):
        ...   # state.cache_rows is True while its LISTEN is active
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
from dataclasses import dataclass
from typing import Any

import anyio
import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)
from anyio.abc import TaskStatus

from harness.errors import describe_reason
from harness.instruction_files.stores._base import StoreEvents
from harness.instruction_files.stores.postgres._schema import CHANNEL
from harness.runtime import ChildSpec
from harness.stores._secrets import scrub

__all__ = ["ListenState", "Listener"]

logger = logging.getLogger(__name__)

_BACKOFF_FIRST = 0.1
_BACKOFF_CAP = 5.0
_STABLE_AFTER = 1.0
"""A connection that lived this long resets the backoff (the next attempt is immediate)."""
_CLOSE_TIMEOUT = 1.0


@dataclass(slots=True)
class ListenState:
    """What the listeners tell the store: may rows be cached now, and in which generation.

    A store whose tree is entered twice (``store=`` given to two Harness instances) has two
    listeners, each feeding its own cache; rows may be cached only while every one of them
    listens (``listening == running > 0``), since each cache hears only its own listener.
    """

    generation: int = 0
    running: int = 0
    listening: int = 0
    backend_pid: int | None = None

    @property
    def cache_rows(self) -> bool:
        return self.running > 0 and self.listening == self.running


class Listener:
    """One node's LISTEN on ``harness_agent_instructions`` (see docs/architecture/stores.md)."""

    def __init__(
        self,
        url: str,
        events: StoreEvents,
        state: ListenState,
        *,
        name: str,
        secrets: tuple[str, ...],
        heartbeat: float,
        connect_timeout: float,
    ) -> None:
        self._url = url
        self._events = events
        self._state = state
        self._name = name
        self._secrets = secrets
        self._heartbeat = heartbeat
        self._connect_timeout = connect_timeout
        self._listening: asyncpg.Connection | None = None
        """The connection whose LISTEN is active (None while notices could be missed)."""
        self._failure: BaseException | None = None

    def child_spec(self, id: str = "postgres_listener") -> ChildSpec:
        """A permanent child; stopping it closes its connection within about a second."""
        return ChildSpec(id, self.run, shutdown=self._connect_timeout + 2 * _CLOSE_TIMEOUT)

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Ready at once; then connect, listen, watch, and reconnect, until cancelled."""
        self._state.running += 1
        task_status.started()
        failures = 0
        try:
            while True:
                connection = await self._connect(failures)
                if connection is None:
                    failures += 1
                    await anyio.sleep(_backoff(failures))
                    continue
                began = anyio.current_time()
                reason = "stopped"
                try:
                    reason = await self._serve(connection)
                finally:
                    # Rows are dropped before the close is awaited: closing a connection that
                    # died silently can take the whole close timeout.
                    self._disconnected(reason)
                    await _close(connection)
                    self._log(logging.DEBUG, "listener_closed", f"reason={reason!r}")
                self._raise_failure()
                lived = anyio.current_time() - began
                failures = 0 if lived >= _STABLE_AFTER else failures + 1
                await anyio.sleep(_backoff(failures))
        finally:
            self._disconnected("stopped")
            self._state.running -= 1

    async def _connect(self, failures: int) -> asyncpg.Connection | None:
        try:
            connection: asyncpg.Connection = await asyncpg.connect(
                self._url,
                timeout=self._connect_timeout,
                server_settings={"application_name": "harness_listener"},
            )
        except Exception as exc:
            level = logging.WARNING if failures == 0 else logging.DEBUG
            self._log(level, "listener_connect_failed", f"reason={describe_reason(exc)!r}")
            return None
        return connection

    async def _serve(self, connection: asyncpg.Connection) -> str:
        """LISTEN, mark the rows cacheable, then watch until the connection is lost."""
        lost = anyio.Event()

        def on_terminated(_: Any) -> None:
            self._disconnected("connection closed", connection)
            lost.set()

        def on_notice(_: Any, pid: int, channel: str, payload: str) -> None:
            try:
                self._notice(payload)
            except Exception as exc:  # a bug in the cache's callbacks: restart this child
                self._failure = exc
                self._disconnected(f"events callback failed: {describe_reason(exc)}", connection)
                lost.set()

        connection.add_termination_listener(on_terminated)
        try:
            await connection.add_listener(CHANNEL, on_notice)
        except Exception as exc:
            return f"LISTEN failed: {describe_reason(exc)}"
        self._state.backend_pid = connection.get_server_pid()
        self._listening = connection
        self._state.generation += 1
        self._state.listening += 1
        self._log(logging.INFO, "listener_connected", f"backend_pid={self._state.backend_pid}")
        while True:
            with anyio.move_on_after(self._heartbeat / 2):
                await lost.wait()
            if lost.is_set():
                return "connection closed"
            try:
                with anyio.fail_after(self._heartbeat / 2):
                    await connection.fetchval("SELECT 1")
            except Exception as exc:
                return f"heartbeat failed: {describe_reason(exc)}"

    def _notice(self, payload: str) -> None:
        try:
            notice = json.loads(payload)
        except ValueError:
            notice = None
        project = notice.get("project_id") if isinstance(notice, dict) else None
        agent = notice.get("agent_slug") if isinstance(notice, dict) else None
        if isinstance(project, str) and isinstance(agent, str):
            self._events.row_changed(project, agent)
            return
        self._log(logging.INFO, "listener_notice_without_row", "dropping every cached row")
        self._events.rows_unreliable()

    def _disconnected(self, reason: str, connection: asyncpg.Connection | None = None) -> None:
        """Loss handling, once per connection: no caching, a new generation, drop the rows.

        A callback passes its ``connection``: a late callback of an earlier connection must
        not end the current one.
        """
        if self._listening is None or connection not in (None, self._listening):
            return
        self._listening = None
        self._state.listening -= 1
        self._state.generation += 1
        self._state.backend_pid = None
        level = logging.DEBUG if reason == "stopped" else logging.WARNING
        self._log(level, "listener_disconnected", f"reason={reason!r}")
        try:
            self._events.rows_unreliable()
        except Exception as exc:
            self._failure = self._failure or exc

    def _raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def _log(self, level: int, event: str, detail: str) -> None:
        logger.log(
            level,
            "%s store=%s %s",
            event,
            self._name,
            scrub(detail, self._secrets),
            extra={"event": event, "store": self._name},
        )


def _backoff(failures: int) -> float:
    """Seconds to wait after ``failures`` consecutive failures: 0, then 0.1 doubling to 5."""
    if failures <= 0:
        return 0.0
    delay: float = min(_BACKOFF_CAP, _BACKOFF_FIRST * 2.0 ** min(failures - 1, 16))
    return delay * random.uniform(0.5, 1.0)


async def _close(connection: asyncpg.Connection) -> None:
    """Close gracefully (the server ends the backend at once), else drop the socket."""
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(_CLOSE_TIMEOUT),
        contextlib.suppress(Exception),
    ):
        await connection.close(timeout=_CLOSE_TIMEOUT)
    connection.terminate()
