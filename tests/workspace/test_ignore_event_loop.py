"""No ignore file can hold the event loop: a hostile tree loads while a 10 ms ticker runs.

The pattern ``*a*a*a*a*a*a*a*b`` against directory names of 200 ``a`` froze the loop for
seconds with the previous (backtracking, GIL-holding) matcher; here every gap between ticks
must stay under 50 ms while ``InstructionFiles.load`` walks such a tree.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from harness.instruction_files import InstructionFiles, InstructionFilesSettings
from harness.runtime import Supervisor

HOSTILE = (
    "*a*a*a*a*a*a*a*b",
    "a*a*a*a*a*[!a]",
    "**/**/**/**/**/x",
    "*?*?*?*?*?*?*?*?b",
    "a/**/a/**/a/**/a/**/b",
)


def hostile_tree(root: Path) -> None:
    (root / ".gitignore").write_text("\n".join(HOSTILE) + "\n")
    (root / "AGENTS.md").write_text("root\n")
    for index in range(20):
        path = root / ("a" * 200) / ("a" * (150 + index))
        path.mkdir(parents=True, exist_ok=True)
        (path / "AGENTS.md").write_text(f"{index}\n")
        (path / ".gitignore").write_text("\n".join(reversed(HOSTILE)) + "\n")
    deep = root
    for _ in range(30):
        deep = deep / "a"
    deep.mkdir(parents=True)
    (deep / "AGENTS.md").write_text("deep\n")


async def test_a_hostile_ignore_file_never_holds_the_loop(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    files = InstructionFiles(InstructionFilesSettings(walk_threads=1))
    gaps: list[float] = []
    done = anyio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    with anyio.fail_after(60):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            group.start_soon(ticker)
            await anyio.sleep(0.05)
            found = await files.load(tmp_path, agent="a")
            done.set()
    assert len(found.sources) == 22
    assert max(gaps) < 0.05, f"the loop was held for {max(gaps) * 1e3:.0f} ms"
