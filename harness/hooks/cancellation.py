"""Telling a cancellation from outside apart from a hook handler's own failure.

``Hooks.run`` must let every cancellation from outside propagate (never report it as a halt)
while a handler's own errors halt the chain. It brackets a run with these checks::

    state = cancel_state()
    if start_pending(state):             # a checkpoint: a pending cancellation raises here
        state = await run_started(state)
    ...                                  # the handlers
    if finish_pending(state):            # and here, if one was requested during the run
        await run_finished(state)

Design notes:

- A run of plain sync handlers never awaits, so without these checks a cancellation requested
  before the run (``scope.cancel()``, an already expired ``fail_after``) or by a handler would
  be swallowed: the run would return "not halted" and the caller act on it.
- A full checkpoint (``sleep(0)``) costs more than a whole chain of sync handlers, so the
  checks only *look* (without an await): ``Task.cancelling()`` for ``Task.cancel()``, and
  anyio's cancel scopes of the task for ``scope.cancel()`` / deadlines; only when one is
  pending do they checkpoint to let it land. anyio keeps the scopes in a private table;
  when that is not there (another anyio version, or not asyncio) the public
  ``checkpoint_if_cancelled`` is used instead.
- Outside cancellation is recognised by the task's count of cancellation requests: it grows
  only when someone cancels this task. The count at the start of the run is the baseline.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from threading import get_ident
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

try:  # anyio's private table of task -> cancel scope (asyncio backend); see the design notes
    from anyio._backends._asyncio import _task_states

    _scope_table: dict[Any, Any] | None = _task_states.data  # type: ignore[attr-defined]
    _ref: Any = weakref.ref
except (ImportError, AttributeError):  # pragma: no cover - another anyio
    _scope_table = None

CancelState: TypeAlias = tuple["asyncio.Task[Any] | None", int, Any]
"""(the running asyncio task or None, its cancellation count at the start, its cancel scope)."""


# The running task, without a system call. asyncio.get_running_loop() checks os.getpid() on
# every call (3.11, 3.12), which costs more than a whole sync chain; so the loop this thread
# ran last is remembered with its thread and trusted while it still says it runs in this thread
# (``BaseEventLoop._thread_id``). Forks clear it. Other loops take the public path.
_last: tuple[int, Any] = (0, None)  # (thread ident, the loop it ran): one tuple, swapped whole
os.register_at_fork(after_in_child=lambda: globals().update(_last=(0, None)))
try:
    _current_tasks: dict[Any, Any] | None = asyncio.tasks._current_tasks  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover - a Python that keeps them elsewhere
    _current_tasks = None


def _current_task() -> asyncio.Task[Any] | None:
    global _last
    ident, loop = _last
    if ident != get_ident() or loop._thread_id != ident or _current_tasks is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        ident = get_ident()
        if getattr(loop, "_thread_id", None) == ident:
            _last = (ident, loop)
        return asyncio.current_task(loop)
    return _current_tasks.get(loop)


def cancel_state() -> CancelState:
    """The running task, its count of cancellation requests and its anyio cancel scope."""
    task = _current_task() if _scope_table is not None else None
    if task is None:  # not on asyncio (trio), no task, another anyio: the public checks
        return None, 0, None
    scope = None
    if _scope_table is not None:
        task_state = _scope_table.get(_ref(task))
        scope = None if task_state is None else task_state.cancel_scope
    return task, task.cancelling(), scope


def scope_cancelled(scope: Any) -> bool:
    """Whether an anyio cancel scope, or one enclosing it up to a shield, is cancelled."""
    while scope is not None:
        if scope._cancel_called:
            return True
        if scope._shield:
            return False
        scope = scope._parent_scope
    return False


def start_pending(state: CancelState) -> bool:
    """Whether ``run_started`` must run: a cancellation may be pending (cheap, no await)."""
    task, count, scope = state
    return task is None or _scope_table is None or count > 0 or scope_cancelled(scope)


async def run_started(state: CancelState) -> CancelState:
    """A cancellation point at the start of a run (when ``start_pending``); the new state."""
    task, _, scope = state
    if task is None or _scope_table is None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        return state if task is None else (task, task.cancelling(), scope)
    # A checkpoint lets a pending cancellation land; if it returns, the requests counted so
    # far are being handled by someone else (cleanup code, a shield) and are the baseline.
    await anyio.lowlevel.checkpoint()
    return task, task.cancelling(), scope


def finish_pending(state: CancelState) -> bool:
    """Whether ``run_finished`` must run: a cancellation was requested during the run."""
    task, baseline, scope = state
    if task is None or _scope_table is None:
        return True
    return task.cancelling() > baseline or (scope is not None and scope_cancelled(scope))


async def run_finished(state: CancelState) -> None:
    """Raise a cancellation from outside requested while the run's handlers ran."""
    task, baseline, scope = state
    if task is None or _scope_table is None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        if task is not None and task.cancelling() > baseline:
            await propagate_outside_cancellation(task, baseline, None)
        return
    if task.cancelling() > baseline:
        await propagate_outside_cancellation(task, baseline, None)
    elif scope is not None and scope_cancelled(scope):
        await anyio.lowlevel.checkpoint()


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
