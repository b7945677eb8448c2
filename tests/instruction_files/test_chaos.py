"""Chaos: the cache task is killed hundreds of times while thousands of loads run.

Every load must return a right, non-stale result (see ``scenarios.ChaosWorld``) or a typed
error; none may hang; and once the tree has stopped no task it started and no descriptor it
opened may be left.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import anyio
import pytest

from harness.instruction_files import InstructionFilesSettings, discover
from tests.filesystem import reuses_inodes_at_once
from tests.scenarios import ChaosParams, run_chaos


async def test_instruction_files_survive_hundreds_of_cache_kills(tmp_path: Path) -> None:
    """150 kills (half brutal cancels, half crashes), ~1,500 loads, edits and invalidations.

    Loads go through real and symlinked workspace paths, seven hostile project ids (SQL and
    path syntax, case and space variants, one without rows) and three agents; 4% of them are
    abandoned by their caller mid-flight.
    """
    params = ChaosParams(kills=150, loaders=24, loads_per_loader=60)
    with anyio.fail_after(60):
        figures = await run_chaos(tmp_path, params)
    assert figures.faults == 150
    assert figures.operations >= 1_440
    assert figures.cancelled > 0  # the abandoned-load path was exercised
    assert figures.escalation is None
    assert figures.clean, figures.summary()


async def test_harness_loads_and_prompts_stay_right_while_its_cache_is_killed(
    tmp_path: Path,
) -> None:
    """The same traffic through a real Harness: 30% of it via ``build_prompt``.

    Only 3 kills, well within the Harness's restart intensity, so the tree must survive.
    """
    params = ChaosParams(kills=3, kill_gap=0.2, loaders=16, loads_per_loader=50)
    params.build_prompt_rate = 0.3
    with anyio.fail_after(60):
        figures = await run_chaos(tmp_path, params, harness=True)
    assert figures.faults == 3
    assert figures.escalation is None
    assert figures.clean, figures.summary()


async def test_harness_that_gives_up_leaves_nothing_behind(tmp_path: Path) -> None:
    """Kills beyond a configured restart intensity (3 in 5 s): MaxRestartsExceeded ends the
    Harness mid-traffic.

    In-flight loads are cancelled with it (none hangs, none returns a wrong answer) and no
    task or descriptor survives the Harness.
    """
    params = ChaosParams(kills=6, kill_gap=0.01, loaders=16, loads_per_loader=400)
    params.build_prompt_rate = 0.3
    with anyio.fail_after(60):
        figures = await run_chaos(tmp_path, params, harness=True, max_restarts=3)
    assert figures.escalation is not None and "maximum restart intensity" in figures.escalation
    assert figures.clean, figures.summary()


async def test_harness_survives_hundreds_of_cache_kills(tmp_path: Path) -> None:
    params = ChaosParams(kills=120, loaders=16, loads_per_loader=40)
    params.build_prompt_rate = 0.3
    with anyio.fail_after(60):
        figures = await run_chaos(tmp_path, params, harness=True)
    assert figures.escalation is None, figures.escalation
    assert figures.faults == 120
    assert figures.clean, figures.summary()


def test_concurrent_atomic_saves_never_drop_a_file(tmp_path: Path) -> None:
    """Six files saved atomically (write + rename) in a loop while the tree is walked: every
    walk must load all six."""
    if not reuses_inodes_at_once(tmp_path):
        pytest.skip("this filesystem does not reuse inode numbers at once (e.g. tmpfs)")
    ws = tmp_path / "ws"
    rels = [f"d{n}/AGENTS.md" for n in range(6)]
    for rel in rels:
        (ws / rel).parent.mkdir(parents=True)
        (ws / rel).write_text("v0\n")
    stop = threading.Event()

    def save_forever() -> None:
        version = 0
        while not stop.is_set():
            for rel in rels:
                version += 1
                tmp = ws / f"{rel}.tmp"
                tmp.write_text(f"v{version}\n")
                os.replace(tmp, ws / rel)

    saver = threading.Thread(target=save_forever, daemon=True)
    saver.start()
    settings = InstructionFilesSettings(walk_threads=1)
    dropped: list[tuple[str, ...]] = []
    deadline = time.monotonic() + 4
    try:
        while time.monotonic() < deadline and not dropped:
            found = discover(ws, settings)
            if len(found.sources) != len(rels):
                dropped.append(found.warnings)
    finally:
        stop.set()
        saver.join(5)
    assert dropped == []
