"""The pending callers' deadlines of one running actor, kept by one timer."""

# One timer per running actor (a heap of deadlines and a single ``call_at`` for the earliest)
# instead of a timer handle armed and cancelled per call, which cost about a quarter of a call.

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from typing import Any

__all__ = ["Deadlines"]


def _expire(future: asyncio.Future[Any], timeout: float) -> None:
    if not future.done():
        future.set_exception(TimeoutError(f"the actor did not reply within {timeout} s"))


class Deadlines:
    """The pending callers' deadlines of one running actor, kept by one timer.

    A heap of ``(deadline, seq, future, timeout)``; the single timer is armed at the earliest
    deadline and, when it fires, fails the expired futures still waiting with ``TimeoutError``
    and re-arms for the next. Entries of answered calls are dropped lazily: the heap is
    compacted once it holds more than twice the pending calls (plus a little), so it stays
    bounded and the work per call stays constant.
    """

    __slots__ = ("_heap", "_loop", "_pending", "_seq", "_timer", "_timer_at")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[tuple[float, int, asyncio.Future[Any], float]] = []
        self._pending = 0
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def add(self, deadline: float, future: asyncio.Future[Any], timeout: float) -> None:
        heapq.heappush(self._heap, (deadline, next(self._seq), future, timeout))
        self._pending += 1
        if deadline < self._timer_at:
            self._arm(deadline)

    def settled(self) -> None:
        """One added call is over (its future is done)."""
        self._pending -= 1
        if len(self._heap) > 2 * self._pending + 64:
            self._heap = [entry for entry in self._heap if not entry[2].done()]
            heapq.heapify(self._heap)
            if not self._heap and self._timer is not None:
                self._timer.cancel()
                self._timer, self._timer_at = None, math.inf

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, math.inf
        self._heap.clear()

    def _arm(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(deadline, self._sweep)
        self._timer_at = deadline

    def _sweep(self) -> None:
        self._timer, self._timer_at = None, math.inf
        heap, now = self._heap, self._loop.time()
        while heap and heap[0][0] <= now:
            _, _, future, timeout = heapq.heappop(heap)
            _expire(future, timeout)
        if heap:
            self._arm(heap[0][0])
