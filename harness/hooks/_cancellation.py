"""Telling a cancellation from outside apart from a hook handler's own failure.

``Hooks.run`` lets every cancellation from outside propagate (never a halt) while a handler's
own errors halt the chain. It brackets a run with these checks, all built on public calls
(``asyncio.current_task``, ``Task.cancelling`` and ``anyio.current_effective_deadline``)::

    state = cancel_state()
    if start_pending(state):             # a Task.cancel() is pending: it lands here
        state = await run_started(state)
    ...                                  # the handlers
    if finish_pending(state):            # a cancellation is pending now: it lands here
        await run_finished(state)

A run never returns an outcome while a cancellation of its caller is pending.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, TypeAlias

import anyio
import anyio.lowlevel

__all__ = [
    "CancelState",
    "cancel_state",
    "finish_pending",
    "propagate_outside_cancellation",
    "run_finished",
    "run_started",
    "scope_cancelled",
    "start_pending",
]

# A run of plain sync handlers never awaits, so without these checks a cancellation requested
# before the run (``scope.cancel()``, ``Task.cancel()``, an expired ``fail_after``) or by a
# handler would be swallowed: the run would return "not halted" and the caller act on it. A
# full checkpoint costs more than a whole chain of sync handlers, so the checks only look and
# checkpoint when something is pending. Looking at the cancel scopes (the effective deadline)
# costs about a third of a chain of ten sync handlers, so it is done once, at the end: a sync
# handler cannot be interrupted anyway, and a scope cancelled before the run still lands
# before the run returns. ``Task.cancelling()`` is cheap and read at both ends. Outside
# cancellation is recognised by that count of cancellation requests: it grows only when
# someone cancels this task, and its value at the start of the run is the baseline.

CancelState: TypeAlias = tuple["asyncio.Task[Any] | None", int]
"""(the running asyncio task, or None on another event loop or outside a task; its count of
cancellation requests at the start of the run)."""

_NO_TASK: CancelState = (None, 0)


def cancel_state() -> CancelState:
    """The running asyncio task (None if there is none) and its count of cancel requests."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop in this thread: trio, or a loop of its own
        return _NO_TASK
    return _NO_TASK if task is None else (task, task.cancelling())


def scope_cancelled() -> bool:
    """Whether a cancel scope around the caller (up to a shield) is cancelled.

    anyio reports such a scope's effective deadline as minus infinity, on every backend.
    Outside a task (a plain event-loop callback) there is no scope to be cancelled.
    """
    try:
        return anyio.current_effective_deadline() == -math.inf
    except RuntimeError:  # no task anyio can tell the library of: no cancel scope either
        return False


def start_pending(state: CancelState) -> bool:
    """Whether ``run_started`` must run: the task has cancellation requests (no await)."""
    return state[1] > 0


async def run_started(state: CancelState) -> CancelState:
    """A checkpoint at the start of a run (when ``start_pending``); the new state.

    A pending cancellation lands here; if the checkpoint returns, the requests counted so far
    are being handled by someone else (cleanup code under a shield) and are the baseline.
    """
    await anyio.lowlevel.checkpoint()
    task = state[0]
    return state if task is None else (task, task.cancelling())


def finish_pending(state: CancelState) -> bool:
    """Whether ``run_finished`` must run: a cancellation was requested during the run."""
    task, baseline = state
    return (task is not None and task.cancelling() > baseline) or scope_cancelled()


async def run_finished(state: CancelState) -> None:
    """Raise a cancellation from outside requested while the run's handlers ran."""
    task, baseline = state
    if task is not None and task.cancelling() > baseline:
        await propagate_outside_cancellation(task, baseline, None)
    await anyio.lowlevel.checkpoint()  # a cancelled scope delivers its own cancellation here


async def propagate_outside_cancellation(
    task: asyncio.Task[Any] | None, baseline: int, exc: BaseException | None
) -> None:
    """Re-raise a cancellation from outside that a handler swallowed or turned into an error.

    Returns only when no outside cancellation is pending and ``exc`` (if any) is a handler
    failure to report as a halt: an ``Exception``, or a ``CancelledError`` of the handler's own
    (say, from awaiting a task someone else cancelled), which must not make the caller look
    cancelled. Other ``BaseException``s (``KeyboardInterrupt``, ``SystemExit``, ...) are not a
    handler's verdict and propagate.
    """
    if exc is not None and not isinstance(exc, Exception | asyncio.CancelledError):
        raise exc
    if task is None:
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            raise exc
        return
    if task.cancelling() <= baseline:
        return  # no cancellation from outside: a handler's own CancelledError is its failure
    if isinstance(exc, asyncio.CancelledError):
        raise exc
    # The handler swallowed the cancellation. An anyio cancel scope delivers it again at the
    # next checkpoint, recognisably as its own; a plain Task.cancel() is re-raised here.
    await anyio.lowlevel.checkpoint()
    raise asyncio.CancelledError("cancelled from outside while a hook handler ran") from exc
