"""Threads sharing one walk's stack of directories, until every directory is scanned.

    >>> from harness.workspace._walk_pool import WalkPool
    >>> done = []
    >>> def drain(stack, budget):          # scan up to ``budget`` jobs, pushing their children
    ...     while stack and budget:
    ...         budget -= 1
    ...         job = stack.pop()
    ...         done.append(job)
    ...         stack.extend(job + c for c in "ab" if len(job) < 3)
    >>> WalkPool(drain, ["r"], threads=2).run()
    >>> len(done)                          # r, its 2 children, their 4 children
    7

A worker takes one job, drains up to ``BATCH`` jobs of its subtree on a private stack (no lock
per directory), then hands what is left back to the shared stack. ``outstanding`` counts jobs
not yet scanned (shared or held by a worker); the walk ends when it reaches zero.
``list.pop``/``list.extend`` are atomic under the GIL; the condition guards only the counter
and the idle hand-off. The first failure (``WalkCancelled`` included) stops every worker and is
raised by ``run``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["BATCH", "WalkPool", "default_threads"]

BATCH = 32  # directories a walk thread scans before sharing the rest of its subtree

J = TypeVar("J")


class WalkPool(Generic[J]):
    """``threads`` threads (the caller's among them) calling ``drain(stack, BATCH)``."""

    def __init__(self, drain: Callable[[list[J], int], None], stack: list[J], threads: int) -> None:
        self.drain = drain
        self.stack = stack
        self.threads = threads
        self.outstanding = len(stack)
        self.idle = 0
        self.failed: BaseException | None = None
        self.cond = threading.Condition()

    def run(self) -> None:
        helpers = [
            threading.Thread(target=self.work, name=f"harness-discovery-{n}", daemon=True)
            for n in range(self.threads - 1)
        ]
        for helper in helpers:
            helper.start()
        self.work()
        for helper in helpers:
            helper.join()
        if self.failed is not None:
            raise self.failed

    def work(self) -> None:
        stack = self.stack
        cond = self.cond
        drain = self.drain
        while True:
            if self.failed is not None:  # another thread failed: the walk's result is moot
                return
            try:
                job = stack.pop()
            except IndexError:
                with cond:
                    while not stack and self.outstanding and self.failed is None:
                        self.idle += 1
                        cond.wait()
                        self.idle -= 1
                    if not self.outstanding or self.failed is not None:
                        cond.notify_all()
                        return
                continue
            found = [job]
            try:
                drain(found, BATCH)
            except BaseException as exc:
                with cond:
                    if self.failed is None:
                        self.failed = exc
                    cond.notify_all()
                return
            with cond:
                stack.extend(found)
                self.outstanding += len(found) - 1
                if self.idle:
                    if not self.outstanding:
                        cond.notify_all()
                    elif found:
                        cond.notify(len(found))


def default_threads() -> int:
    """One thread on a machine with two CPUs or fewer, else four.

    Listings release the GIL, but CPython's ``scandir`` releases and retakes it for every
    entry it reads, so two walking threads hand it back and forth once per entry, a wake-up
    each; on a 2-CPU machine that costs more than the overlap gains (measured on the
    20,000-directory benchmark tree: 1 thread 266 ms, 2 threads 283 ms; again later, best of
    9 cold walks, 424 ms against 459 ms), so threads are used only where there are CPUs to
    spare (and they pay most where listings wait on a cold disk).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 1 if cpus <= 2 else 4
