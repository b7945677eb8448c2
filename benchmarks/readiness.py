"""Benchmark context requests: the readiness gate and ``allocation="ceilings"``, with peers
measured in the same run.

Run: ``python benchmarks/readiness.py`` (``--quick`` for a smaller run). Always exits 0.

Row 1: ``harness.readiness`` over 10,000 evidence units (kinds, claims, values and authority
classes drawn deterministically; a tenth with ``max_age``, a tenth with ``requires``) against
``assemble`` of the same units in the ``evidence`` layer; target at most 0.5x. Rows 1a and 1b
(information) give the floor: one C-level pass reading each attribute the gate must read of
every unit (kind, claim, authority, value, requires, max_age, id), against ``assemble`` and
against the gate.
Row 2: ``assemble(..., allocation="ceilings")`` against ``"fixed"`` on the extended layout
with every layer holding units and the evidence layer over its ceiling, the fixed build given
the budgets the ceilings build ended with (so both keep the same units and text, and the ratio
is the allocation's own cost); target at most 1.2x. Row 3 (information): against ``"fixed"``
with the layout's budgets, which keeps about a third of the evidence the ceilings build keeps.
Timings are the best of several runs, the compared calls interleaved.
"""

from __future__ import annotations

import argparse
import gc
import operator
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import EXTENDED_LAYOUT, ContextRequest, Requirement, Unit, assemble, readiness

NOW = datetime(2026, 12, 1, tzinfo=UTC)
CLASSES = ("runtime_control_plane", "incident", "specification", "source_code", "documentation")


def evidence(n: int) -> list[Unit]:
    units = []
    for i in range(n):
        units.append(
            Unit(
                f"e{i}",
                f"observation {i}: the value of claim c{i % 50} is {i % 7} " + "x" * 120,
                source=f"src/{i}.md",
                kind=f"k{i % 20}",
                claim=f"c{i % 50}",
                value=str(i % 7),
                authority=CLASSES[i % len(CLASSES)],
                observed_at=NOW - timedelta(seconds=i) if i % 10 == 0 else None,
                max_age=5000.0 if i % 10 == 0 else None,
                requires=frozenset({"secrets:read"}) if i % 10 == 1 else frozenset(),
            )
        )
    return units


NEEDED = tuple(
    operator.attrgetter(name)
    for name in ("kind", "claim", "authority", "value", "requires", "max_age", "id")
)


def floor(units: Sequence[Unit]) -> None:
    """What any gate must do: read each attribute it decides on, of every unit."""
    for getter in NEEDED:
        list(map(getter, units))


def best(*calls: Callable[[], object], repeat: int) -> list[float]:
    """Best time of each call, the calls interleaved so that machine noise hits all alike."""
    times = [float("inf")] * len(calls)
    for _ in range(repeat):
        for index, call in enumerate(calls):
            gc.collect()
            start = time.perf_counter()
            call()
            times[index] = min(times[index], time.perf_counter() - start)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small, fast run")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 9
    units = evidence(10_000)
    request = ContextRequest(
        "t",
        requirements=[Requirement(f"k{i}", claim=f"c{i}") for i in range(20)],
        authority={f"c{i}": list(CLASSES) for i in range(50)},
    )
    gate, peer, bare = best(
        lambda: readiness(request, units, now=NOW),
        lambda: assemble({"evidence": units}, layout=EXTENDED_LAYOUT, now=NOW),
        lambda: floor(units),
        repeat=repeat,
    )
    rows: list[tuple[str, float, float, float | None]] = [
        ("readiness / assemble, 10,000 units", gate, peer, 0.5),
        ("  floor (read 7 attributes) / assemble", bare, peer, None),
        ("  readiness / floor", gate, bare, None),
    ]
    layers: dict[str, str | list[Unit]] = {
        "identity": "You are the reviewer.",
        "instruction_files": [
            Unit(f"f{i}", "rule " * 50, source=f"{i}/AGENTS.md") for i in range(8)
        ],
        "business_rules": [Unit(f"r{i}", "rule text " * 20) for i in range(20)],
        "evidence": [Unit(f"e{i}", "evidence " * 40) for i in range(2000)],
        "task_state": "step 2 of 5",
    }
    lent = assemble(layers, layout=EXTENDED_LAYOUT, allocation="ceilings")
    ended = {report.name: report.budget for report in lent.layers}
    assert assemble(layers, layout=EXTENDED_LAYOUT, budgets=ended).text == lent.text
    ceilings, same, fixed = best(
        lambda: assemble(layers, layout=EXTENDED_LAYOUT, allocation="ceilings"),
        lambda: assemble(layers, layout=EXTENDED_LAYOUT, budgets=ended),
        lambda: assemble(layers, layout=EXTENDED_LAYOUT),
        repeat=repeat * 5,
    )
    rows.append(('allocation "ceilings" / "fixed", same', ceilings, same, 1.2))
    rows.append(('"ceilings" / "fixed" (layout budgets)', ceilings, fixed, None))
    print(f"{'row':<38} {'subject ms':>11} {'peer ms':>9} {'ratio':>7} {'target':>7}  met")
    for name, subject, base, target in rows:
        ratio = subject / base
        met = "-" if target is None else "yes" if ratio <= target else "NO"
        shown = "info" if target is None else f"{target:.1f}x"
        print(
            f"{name:<38} {subject * 1e3:>11.3f} {base * 1e3:>9.3f} {ratio:>7.2f} {shown:>7}  {met}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
