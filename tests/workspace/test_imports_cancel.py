"""A cancelled load stops its worker threads: the caller returns at once and the thread does
not go on expanding imports.

The workload is a file of 300,000 distinct ``@path`` lines naming missing files (linear work,
but minutes of it): the ``.AGENTS/`` read of ``Harness.build_prompt`` and an instruction
file's expansion in ``InstructionFiles.load``. Each runs in a child process under a hard
timeout, so a regression fails instead of freezing the suite; the child reports how long the
cancelled call took to return and how much CPU the process burned a second after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LINES = 300_000
CAP = 8 << 20

CHILD = """
import json, sys, time
import anyio
from harness import Harness
from harness.config import HarnessConfig, ProjectContextSettings
from harness.instruction_files import InstructionFiles, InstructionFilesSettings
from harness.runtime import Supervisor

async def build(ws):
    config = HarnessConfig(project_context=ProjectContextSettings(max_file_bytes={cap}))
    async with Harness(config) as harness:
        await harness.build_prompt(ws, agent="reviewer")

async def load(ws):
    files = InstructionFiles(InstructionFilesSettings(max_bytes={cap}))
    async with Supervisor([files.child_spec()]):
        await files.load(ws, agent="reviewer")

async def main(kind, ws):
    call = build if kind == "build" else load
    with anyio.move_on_after(0.5):
        start = time.monotonic()
        await call(ws)
    returned = time.monotonic() - start
    await anyio.sleep(1.0)  # the thread's current step ends
    cpu = time.process_time()
    await anyio.sleep(1.5)
    print(json.dumps({{"returned": returned, "cpu": time.process_time() - cpu}}))

anyio.run(main, sys.argv[1], sys.argv[2])
"""


def lines() -> str:
    return "".join(f"@missing/{i}.md\n" for i in range(LINES))


@pytest.mark.parametrize(
    ("kind", "path"), [("build", ".AGENTS/overview.md"), ("load", "AGENTS.md")]
)
def test_a_cancelled_load_stops_expanding_imports(tmp_path: Path, kind: str, path: str) -> None:
    ws = tmp_path / "ws"
    (ws / path).parent.mkdir(parents=True)
    (ws / path).write_text(lines())
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(cap=CAP), kind, str(ws)],
        capture_output=True,
        text=True,
        timeout=40,  # uncancelled, the load takes minutes
        env=env,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["returned"] < 5, report  # the caller did not wait for the thread
    assert report["cpu"] < 0.75, report  # and the thread stopped: no second of CPU burned
