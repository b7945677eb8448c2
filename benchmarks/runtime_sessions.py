"""Benchmark the runtime for many sessions: start cost, registry lookups, memory per actor.

Run: ``python benchmarks/runtime_sessions.py`` (``--quick`` for a small run). Prints a table of
ratios against a peer measured in the same run; always exits 0.

- Start: 10,000 session actors under one DynamicSupervisor (each ``start_child`` returns once
  the actor is ready), against 10,000 bare anyio tasks each with a memory object stream,
  started with ``task_group.start`` (waiting for each to be ready). Target <= 3x.
- Lookup: ``Registry.lookup`` of a running actor against a dict lookup wrapped in a method
  that checks liveness (``value.running``). Target <= 10x.
- Memory: tracemalloc bytes per idle session actor (under the DynamicSupervisor) against a bare
  idle task with a memory object stream. Target <= 2x.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from anyio.abc import TaskStatus

from harness.runtime import Actor, DynamicSupervisor, Registry


class Session(Actor):
    async def handle_call(self, msg: Any) -> Any:
        return msg


async def bare(task_status: TaskStatus[None]) -> None:
    send, receive = anyio.create_memory_object_stream[Any](1024)
    task_status.started()
    async with send, receive:
        async for _ in receive:
            pass


async def start_bare(n: int, measure_memory: bool = False) -> tuple[float, int]:
    gc.collect()
    if measure_memory:
        tracemalloc.start()
    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(n):
            await group.start(bare)
        elapsed = time.perf_counter() - start
        used = tracemalloc.get_traced_memory()[0] if measure_memory else 0
        if measure_memory:
            tracemalloc.stop()
        group.cancel_scope.cancel()
    return elapsed, used


async def start_sessions(n: int, measure_memory: bool = False) -> tuple[float, int]:
    gc.collect()
    registry = Registry()
    if measure_memory:
        tracemalloc.start()
    start = time.perf_counter()
    async with DynamicSupervisor() as sup:
        for i in range(n):
            await sup.start_child(Session().child_spec(id=f"s{i}", name=(registry, i)))
        elapsed = time.perf_counter() - start
        used = tracemalloc.get_traced_memory()[0] if measure_memory else 0
        if measure_memory:
            tracemalloc.stop()
    return elapsed, used


class Liveness:
    """The peer of a registry lookup: a dict lookup in a method that checks liveness."""

    def __init__(self, entries: dict[int, Actor]) -> None:
        self.entries = entries

    def lookup(self, key: int) -> Actor | None:
        actor = self.entries.get(key)
        return actor if actor is not None and actor.running else None


async def lookups(n: int) -> tuple[float, float]:
    registry = Registry()
    actor = Session()
    async with DynamicSupervisor() as sup:
        await sup.start_child(actor.child_spec(id="s", name=(registry, "s")))
        peer = Liveness({0: actor})
        plain = {0: actor}
        start = time.perf_counter()
        for _ in range(n):
            registry.lookup("s")
        reg = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(n):
            peer.lookup(0)
        live = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(n):
            plain.get(0)
        bare_dict = time.perf_counter() - start
    return reg / live, reg / bare_dict


async def main(quick: bool) -> None:
    logging.getLogger("harness.runtime").addHandler(logging.NullHandler())
    logging.getLogger("harness.runtime").propagate = False
    n = 1_000 if quick else 10_000
    bare_times, session_times = [], []
    for _ in range(3):
        bare_times.append((await start_bare(n))[0])
        session_times.append((await start_sessions(n))[0])
    start_ratio = min(session_times) / min(bare_times)
    _, bare_mem = await start_bare(n, measure_memory=True)
    _, session_mem = await start_sessions(n, measure_memory=True)
    mem_ratio = session_mem / bare_mem
    lookup_live, lookup_dict = await lookups(100_000 if quick else 1_000_000)
    rows = [
        (f"start {n} session actors", f"{min(session_times):.3f} s",
         f"{min(bare_times):.3f} s", f"{start_ratio:.2f}x", "<= 3x", start_ratio <= 3),
        ("registry lookup vs liveness-checked dict", "", "", f"{lookup_live:.2f}x",
         "<= 10x", lookup_live <= 10),
        ("registry lookup vs bare dict.get", "", "", f"{lookup_dict:.2f}x", "", ""),
        ("memory per idle session actor", f"{session_mem / n:.0f} B",
         f"{bare_mem / n:.0f} B", f"{mem_ratio:.2f}x", "<= 2x", mem_ratio <= 2),
    ]  # fmt: skip
    header = ("measure", "harness", "peer: bare anyio", "ratio", "target", "met")
    table = [header, *[tuple("yes" if c is True else "NO" if c is False else str(c)
                             for c in row) for row in rows]]  # fmt: skip
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print(f"runtime sessions benchmark ({'quick' if quick else 'full'}: {n} sessions)")
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small, fast run")
    args = parser.parse_args()
    anyio.run(main, args.quick)
