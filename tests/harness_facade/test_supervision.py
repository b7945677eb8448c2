"""The Harness's restart intensity comes from ``[supervisor]`` in the config.

The cache child is cheap to lose (``load`` answers uncached while it is down), so the default
must absorb a restart storm; a small configured intensity must still stop the Harness.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessConfig
from harness.config import SupervisorSettings
from harness.instruction_files import InstructionFiles
from harness.runtime import MaxRestartsExceeded

Tree = Callable[[dict[str, str | bytes]], Path]


async def _crash_and_wait_for_restart(files: InstructionFiles) -> None:
    """Crash the running cache task, then yield until the supervisor has it running again."""
    while not files._crash_cache():
        await anyio.lowlevel.checkpoint()
    while files.cache_running:  # the crash is seen at the task's next checkpoint
        await anyio.lowlevel.checkpoint()
    while not files.cache_running:
        await anyio.lowlevel.checkpoint()


async def test_default_intensity_survives_hundreds_of_cache_crashes(
    tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    """300 crashes in well under a second: over the old 3-in-5 s by a hundredfold."""
    workspace = tree({"AGENTS.md": "root rules\n"})
    caplog.set_level(logging.CRITICAL)  # 300 child_terminated reports are not news here
    with anyio.fail_after(30):
        async with Harness(HarnessConfig()) as h:
            for _ in range(300):
                await _crash_and_wait_for_restart(h.instruction_files)
            [child] = h.supervisor.which_children()
            assert (child.status, child.restarts) == ("running", 300)
            found = await h.instruction_files.load(workspace, agent="reviewer")
            assert [source.path for source in found] == ["AGENTS.md"]
            prompt = await h.build_prompt(workspace, agent="reviewer")
            assert "root rules" in prompt.text


async def test_a_small_configured_intensity_still_stops_the_harness(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``max_restarts = 2``: the third crash inside the window ends the Harness."""
    config = HarnessConfig(supervisor=SupervisorSettings(max_restarts=2, max_seconds=60))
    caplog.set_level(logging.CRITICAL)
    crashes = 0
    with anyio.fail_after(10):
        with pytest.raises(MaxRestartsExceeded):
            async with Harness(config) as h:
                files = h.instruction_files
                for _ in range(2):
                    await _crash_and_wait_for_restart(files)
                    crashes += 1
                assert h.supervisor.which_children()[0].restarts == 2
                while not files._crash_cache():
                    await anyio.lowlevel.checkpoint()
                crashes += 1
                await anyio.sleep_forever()
    assert crashes == 3
    assert not files.cache_running
