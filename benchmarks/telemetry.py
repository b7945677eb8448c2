"""Benchmark: what telemetry costs a warm build of the bundled example, measured in one run.

Cases (the README's example: examples/acme, agent reviewer, project acme, its database, rules
and task state; the instruction files cached, so every build is warm):

* ``SDK + in-memory exporter``: ``harness.telemetry.instrument`` with a real OpenTelemetry SDK
  ``TracerProvider`` (a ``SimpleSpanProcessor`` into an ``InMemorySpanExporter``) and
  ``MeterProvider`` (an ``InMemoryMetricReader``), against the same builds uninstrumented,
  rounds alternating. Target ratio <= 1.5.
* ``never instrumented``: a build (and a 10-handler sync hook chain) in this process before
  ``instrument`` was ever called, against the same after ``instrument`` and ``uninstrument``:
  the methods are then the very originals again (checked), so the ratio shows the noise floor.
  Uninstrumented harness has no telemetry check on any path: no measurable cost.

Usage: ``python benchmarks/telemetry.py [--quick]``. Timings are the lower quartile of single
calls over N rounds (a shared machine's load spikes would swamp a mean).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness._harness import Harness
from harness._unit_files import read_unit_file
from harness.hooks import Hooks

ROOT = Path(__file__).resolve().parent.parent
ACME = ROOT / "examples" / "acme"
RULES = read_unit_file(str(ACME / "business-rules.txt"), label="rules")
STATE = read_unit_file(str(ACME / "task-state.jsonl"), label="state")
HOOKS = Hooks()
for index in range(10):
    HOOKS = HOOKS.register("pre_tool_use", lambda payload: None, name=f"h{index}")
PAYLOAD = {"tool_name": "Bash", "tool_input": {"command": "ls"}}


async def times(call: Callable[[], Awaitable[Any]], calls: int) -> list[float]:
    """The seconds of each of ``calls`` calls."""
    found = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        found.append(time.perf_counter() - started)
    return found


def quartile(samples: list[float]) -> float:
    """The lower quartile: robust to the load spikes of a shared machine, unlike a mean."""
    return statistics.quantiles(samples, n=4)[0]


async def best(call: Callable[[], Awaitable[Any]], calls: int, rounds: int) -> float:
    """The lower quartile of per-call seconds over ``rounds`` rounds of ``calls`` calls."""
    samples: list[float] = []
    for _ in range(rounds):
        samples.extend(await times(call, calls))
    return quartile(samples)


def sdk() -> tuple[Any, Any, Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(exporter))
    return tracers, MeterProvider(metric_readers=[InMemoryMetricReader()]), exporter


async def main(quick: bool) -> None:
    from harness import telemetry

    calls, rounds = (50, 5) if quick else (200, 15)
    async with Harness(database=ROOT / "examples" / "acme.db") as harness:

        async def build() -> None:
            await harness.build(
                ACME, agent="reviewer", project_id="acme", business_rules=RULES, task_state=STATE
            )

        async def hooks() -> None:
            await HOOKS.run("pre_tool_use", PAYLOAD)

        await best(build, calls, 1)  # warm: the cache holds the instruction files
        originals = Harness.__dict__["build"], Hooks.__dict__["run"]
        never_build = await best(build, calls, rounds)
        never_hooks = await best(hooks, calls * 10, rounds)
        plain_samples: list[float] = []
        traced_samples: list[float] = []
        for _ in range(rounds):  # rounds alternate: the machine's load drifts
            plain_samples.extend(await times(build, calls))
            tracers, meters, exporter = sdk()  # fresh providers: one instrumentation each
            telemetry.instrument(tracer_provider=tracers, meter_provider=meters)
            traced_samples.extend(await times(build, calls))
            telemetry.uninstrument()
            assert len(exporter.get_finished_spans()) == 2 * calls  # a build and its load
        plain, traced = quartile(plain_samples), quartile(traced_samples)
        assert (Harness.__dict__["build"], Hooks.__dict__["run"]) == originals
        restored_build = await best(build, calls, rounds)
        restored_hooks = await best(hooks, calls * 10, rounds)
    rows = [
        ("warm build, SDK + in-memory exporter", traced, plain, "<= 1.5"),
        ("warm build, never instrumented", never_build, restored_build, "~1.0 (noise)"),
        ("hook chain sync x10, never instrumented", never_hooks, restored_hooks, "~1.0 (noise)"),
    ]
    print(f"{'case':<42} {'this':>10} {'peer':>10} {'ratio':>6}  target")
    for name, this, peer, target in rows:
        print(f"{name:<42} {this * 1e6:>8.1f}us {peer * 1e6:>8.1f}us {this / peer:>6.2f}  {target}")
    print("peer: the same builds uninstrumented (row 1); after instrument() + uninstrument()")
    print("(rows 2-3), when the methods are the originals again")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    anyio.run(main, parser.parse_args().quick)
