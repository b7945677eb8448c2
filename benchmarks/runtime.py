"""Benchmark the runtime: Actor.call against its peer, restart latency, many sessions.

Run: ``python benchmarks/runtime.py`` (``--quick`` for a small, fast run). Prints a table;
always exits 0.

- ``Actor.call`` round trip (an echo actor under a Supervisor, default 5 s timeout armed)
  against the peer named in the issue: a bare anyio memory-object-stream request/response
  (a server task echoing from a request stream into a response stream), in the same run.
  Each side is timed over several interleaved rounds; the median round is reported.
  Target: ratio <= 1.5.
- Crash to ready: the median time from a child raising to its replacement calling
  ``task_status.started()``, over 1,000 restarts (``max_restarts`` set high for it).
- Many sessions (``benchmarks/runtime_sessions.py``): starting 10,000 session actors under
  one DynamicSupervisor against 10,000 bare tasks each with a memory stream (target <= 3x), a
  registry lookup against a dict lookup (<= 10x), memory per idle actor against a bare task
  with a memory stream (<= 2x).
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from anyio.abc import TaskStatus

from harness.runtime import Actor, ChildSpec, Supervisor


class Echo(Actor):
    async def handle_call(self, msg: Any) -> Any:
        return msg


async def actor_round_trips(n: int, timeout: float | None = 5.0) -> float:  # noqa: ASYNC109
    """Seconds per Actor.call round trip (``timeout=None``: no deadline to keep)."""
    actor = Echo()
    async with Supervisor([actor.child_spec("echo")]):
        await actor.call(0)
        start = time.perf_counter()
        for i in range(n):
            await actor.call(i, timeout)
        return (time.perf_counter() - start) / n


async def stream_round_trips(n: int) -> float:
    """Seconds per request/response over bare anyio memory object streams."""
    req_send, req_recv = anyio.create_memory_object_stream[int]()
    resp_send, resp_recv = anyio.create_memory_object_stream[int]()

    async def server() -> None:
        async with req_recv, resp_send:
            async for item in req_recv:
                await resp_send.send(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(server)
        async with req_send, resp_recv:
            await req_send.send(0)
            await resp_recv.receive()
            start = time.perf_counter()
            for i in range(n):
                await req_send.send(i)
                await resp_recv.receive()
            elapsed = time.perf_counter() - start
    return elapsed / n


async def crash_to_ready(restarts: int) -> list[float]:
    """Seconds from each crash to the replacement signalling ready."""
    samples: list[float] = []
    crash_at = 0.0
    ready = anyio.Event()
    crash = anyio.Event()

    async def start(task_status: TaskStatus[None]) -> None:
        nonlocal crash, ready, crash_at
        now = time.perf_counter()
        if crash_at:
            samples.append(now - crash_at)
        crash = anyio.Event()
        task_status.started()
        ready.set()
        await crash.wait()
        crash_at = time.perf_counter()
        raise RuntimeError("crash")

    spec = ChildSpec("worker", start)
    async with Supervisor([spec], max_restarts=restarts * 10, max_seconds=1.0):
        for _ in range(restarts):
            ready = anyio.Event()
            crash.set()
            await ready.wait()
    return samples


async def main(quick: bool) -> None:
    # A thousand crashes log a thousand child_terminated records: keep them off the terminal
    # (records are still created and handled, as in an application with logging configured).
    runtime_logger = logging.getLogger("harness.runtime")
    runtime_logger.addHandler(logging.NullHandler())
    runtime_logger.propagate = False
    calls = 2_000 if quick else 20_000
    rounds = 3 if quick else 7
    restarts = 100 if quick else 1_000

    actor_times: list[float] = []
    untimed_times: list[float] = []
    stream_times: list[float] = []
    for _ in range(rounds):  # interleaved, so all sides see the same machine load
        gc.collect()
        stream_times.append(await stream_round_trips(calls))
        gc.collect()
        actor_times.append(await actor_round_trips(calls))
        gc.collect()
        untimed_times.append(await actor_round_trips(calls, None))
    actor = statistics.median(actor_times)
    untimed = statistics.median(untimed_times)
    stream = statistics.median(stream_times)
    ratio = actor / stream
    timer_share = max(0.0, actor - untimed) / actor

    gc.collect()
    samples = await crash_to_ready(restarts)
    median_restart = statistics.median(samples)
    p95 = sorted(samples)[int(len(samples) * 0.95) - 1]

    rows = [
        ("Actor.call round trip", f"{actor * 1e6:.1f} us", f"{stream * 1e6:.1f} us",
         f"{ratio:.2f}x", "<= 1.5x", "yes" if ratio <= 1.5 else "NO"),
        ("Actor.call, timeout=None (no timer)", f"{untimed * 1e6:.1f} us",
         f"{stream * 1e6:.1f} us", f"{untimed / stream:.2f}x", "", ""),
        ("  share of a 5 s-timeout call spent on its timer", f"{timer_share:.0%}", "", "",
         "was 25%", ""),
        (f"crash -> replacement ready (median of {len(samples)})",
         f"{median_restart * 1e6:.0f} us", f"p95 {p95 * 1e6:.0f} us", "", "", ""),
    ]  # fmt: skip
    header = ("measure", "harness", "peer: anyio streams", "ratio", "target", "met")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"runtime benchmark ({'quick' if quick else 'full'}: {calls} calls x {rounds} rounds)")
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small, fast run")
    args = parser.parse_args()
    anyio.run(main, args.quick)
