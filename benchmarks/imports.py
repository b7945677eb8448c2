"""Benchmark the bounds of imports and targets: fan-out, event-loop stalls, cancellation.

Run: ``python benchmarks/imports.py``. Prints a table; always exits 0.

- fan-out: five 360-byte files, each with 60 lines importing the next (before the cap was
  checked before each expansion, one load opened the last file ~13 million times), against
  the floor: a file of the same expanded size without imports, loaded the same way.
- targets: the largest gap of a 1 ms ticker on the event loop while cached loads with 16
  targets of 4,000 bytes each (370 real directories deep) run, against the ticker idle, and
  against what a load did before (``scope_of`` on the loop).
- cancel: how long ``build_prompt`` under ``move_on_after(0.2)`` takes to return while its
  ``.AGENTS/`` file has 300,000 distinct missing imports (minutes of work uncancelled).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
import anyio.lowlevel

from harness import Harness
from harness.config import HarnessConfig, ProjectContextSettings
from harness.instruction_files import InstructionFiles, discover
from harness.runtime import Supervisor
from harness.workspace import resolve_workspace
from harness.workspace._targets import scope_of


def fan_out(tmp: Path) -> tuple[float, float]:
    ws = tmp / "fan"
    ws.mkdir()
    for i in range(5):
        (ws / f"f{i}.md").write_text(f"@f{i + 1}.md\n" * 60)
    (ws / "AGENTS.md").write_text("@f0.md\n")
    start = time.perf_counter()
    size = len(discover(ws).sources[0].content.encode())
    hostile = time.perf_counter() - start
    plain = tmp / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text("x\n" * (size // 2))
    start = time.perf_counter()
    discover(plain)
    return hostile, time.perf_counter() - start


async def worst_gap(work: Callable[[], Awaitable[None]], seconds: float) -> float:
    gap = 0.0
    done = anyio.Event()

    async def tick() -> None:
        nonlocal gap
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(0.001)
            now = time.perf_counter()
            gap, last = max(gap, now - last), now

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            await work()
        done.set()
    return gap


async def targets(tmp: Path) -> tuple[float, float, float]:
    ws = tmp / "deep"
    ws.mkdir()
    names = []
    for t in range(16):  # 16 chains of 370 real directories, ~4,000 bytes each
        parts = [f"t{t}"] + ["d" * 10] * 370
        fd = os.open(ws, os.O_RDONLY)
        for part in parts:
            os.mkdir(part, dir_fd=fd)
            child = os.open(part, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(fd)
        names.append("/".join(parts))
    root = resolve_workspace(ws)
    files = InstructionFiles()
    async with Supervisor([files.child_spec()]):
        await files.load(root, agent="a", targets=names)

        async def load() -> None:
            await files.load(root, agent="a", targets=names)

        async def old() -> None:
            scope_of(root, names, prune=())
            await anyio.lowlevel.checkpoint()

        async def idle() -> None:
            await anyio.sleep(0.01)

        return (
            await worst_gap(idle, 1.0),
            await worst_gap(load, 1.0),
            await worst_gap(old, 1.0),
        )


async def cancel(tmp: Path) -> float:
    ws = tmp / "cancel"
    (ws / ".AGENTS").mkdir(parents=True)
    lines = "".join(f"@missing/{i}.md\n" for i in range(300_000))
    (ws / ".AGENTS" / "overview.md").write_text(lines)
    config = HarnessConfig(project_context=ProjectContextSettings(max_file_bytes=8 << 20))
    async with Harness(config) as harness:
        start = time.perf_counter()
        with anyio.move_on_after(0.2):
            await harness.build_prompt(ws, agent="reviewer")
        return time.perf_counter() - start


def main() -> int:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        hostile, plain = fan_out(tmp)
        idle, load, old = anyio.run(targets, tmp)
        returned = anyio.run(cancel, tmp)
    print(f"{'case':<44}{'value':>12}{'ratio':>10}")
    print(
        f"{'fan-out load (s) vs same-size plain load':<44}{hostile:>12.4f}{hostile / plain:>9.2f}x"
    )
    print(f"{'targets: worst loop gap idle (ms)':<44}{idle * 1000:>12.2f}")
    print(f"{'targets: worst gap, cached loads (ms)':<44}{load * 1000:>12.2f}{load / idle:>9.2f}x")
    print(f"{'targets: worst gap, old on-loop (ms)':<44}{old * 1000:>12.2f}{old / idle:>9.2f}x")
    print(f"{'cancel at 0.2 s: build_prompt returned (s)':<44}{returned:>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
