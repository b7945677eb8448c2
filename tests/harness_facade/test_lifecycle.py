"""Lifecycle: many Harness start/stop cycles, stops while children start or restart.

Each kind of cycle is checked on its own (so a failure names the situation), then all kinds
in turn with traced memory: no growth in tasks, descriptors or memory beyond noise.
"""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import pytest

from tests.scenarios import (
    LIFECYCLE_KINDS,
    Figures,
    Resources,
    lifecycle_cycle,
    quiet_logs,
    run_lifecycle,
    small_world,
)


@pytest.mark.parametrize("kind", LIFECYCLE_KINDS)
async def test_each_kind_of_cycle_is_clean(tmp_path: Path, kind: str) -> None:
    """clean / cancel_during_start / stop_while_restarting / cancel_while_restarting /
    error_in_body / escalation / stop_while_child_starting / stop_while_child_restarting."""
    ws, database = small_world(tmp_path)
    figures = Figures(kind)
    rng = random.Random(kind)
    with anyio.fail_after(30), quiet_logs():
        await lifecycle_cycle(kind, ws, database, rng, Figures("warm-up"))
        before = Resources.snapshot()
        for _ in range(12):
            await lifecycle_cycle(kind, ws, database, rng, figures)
        tasks, fds = await before.leaks()
    assert (tasks, fds) == ([], [])
    assert figures.wrong == 0 and figures.hung == 0, figures.summary()
    assert figures.operations == 12


async def test_hundreds_of_cycles_do_not_grow_tasks_fds_or_memory(tmp_path: Path) -> None:
    """240 cycles (30 of each kind) after a warm-up; memory traced over the second half.

    A leak of one Harness, Supervisor or InstructionFiles per cycle is kilobytes; the bound
    (64 KiB over 120 cycles, ~550 B per cycle) is far below that and far above the noise
    (measured: within +-100 B per cycle).
    """
    with anyio.fail_after(60):
        figures = await run_lifecycle(tmp_path, 240)
    assert figures.operations == 240
    assert figures.clean, figures.summary()
    assert figures.memory_growth_bytes < 64 * 1024, figures.memory_growth_bytes
