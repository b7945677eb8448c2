"""Blocking workspace work in a worker thread that a cancelled caller neither waits for nor
leaves running.

    >>> import anyio, threading
    >>> from harness.workspace._stoppable import run_stoppable
    >>> def read(stop: threading.Event) -> str:
    ...     return "done" if not stop.is_set() else "stopped"
    >>> anyio.run(run_stoppable, read)
    'done'

``func`` receives a ``threading.Event`` that is set as soon as the caller is finished with
it: returned, failed or cancelled. When the caller is cancelled it returns at once (the
thread is abandoned, its result or error discarded), so ``func`` must check the event often
enough to end soon after: between files, between imports, between path components. Every
thread a load starts for the workspace (the walk, ``.AGENTS/``, targets) runs this way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

__all__ = ["run_stoppable"]

T = TypeVar("T")


async def run_stoppable(func: Callable[[threading.Event], T]) -> T:
    """``func(stop)`` in a worker thread; ``stop`` is set once this call is over."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(func, stop, abandon_on_cancel=True)
    finally:
        stop.set()
