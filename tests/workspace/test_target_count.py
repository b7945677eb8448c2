"""The number of targets one load takes is bounded (``TARGETS_MAX``), like each target's
length: past it, ``ArgumentError`` before anything is looked up, on every road in (the pure
``scope_of``, a load, the command line)."""

from __future__ import annotations

import itertools
from pathlib import Path

import anyio
import pytest

from harness import HarnessError, InstructionFiles
from harness.errors import ArgumentError
from harness.runtime import Supervisor
from harness.workspace._targets import TARGETS_MAX, resolve_scope, scope_of
from tests.cli import harness_cli


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "AGENTS.md").write_text("root rules\n")
    return tmp_path / "ws"


def test_the_most_targets_are_accepted(tmp_path: Path) -> None:
    root = str(workspace(tmp_path).resolve())
    targets = [f"src/f{i}.py" for i in range(TARGETS_MAX)]
    assert len(scope_of(root, targets, prune=()).targets) == TARGETS_MAX


def test_one_more_is_refused_without_reading_an_endless_iterable(tmp_path: Path) -> None:
    root = str(workspace(tmp_path).resolve())
    too_many = [f"src/f{i}.py" for i in range(TARGETS_MAX + 1)]
    with pytest.raises(ArgumentError, match=f"more than {TARGETS_MAX} targets") as caught:
        scope_of(root, too_many, prune=())
    assert isinstance(caught.value, HarnessError) and isinstance(caught.value, ValueError)
    endless = (f"src/f{i}.py" for i in itertools.count())
    with pytest.raises(ArgumentError, match="at most"):
        scope_of(root, endless, prune=())


async def test_a_load_refuses_too_many_targets(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    too_many = [f"src/f{i}.py" for i in range(TARGETS_MAX + 1)]
    with anyio.fail_after(20):
        with pytest.raises(ArgumentError, match="targets"):
            await resolve_scope(str(ws.resolve()), too_many, prune=())
        files = InstructionFiles()
        async with Supervisor([files.child_spec()]):
            with pytest.raises(ArgumentError, match="targets"):
                await files.load(ws, agent="reviewer", targets=too_many)
            loaded = await files.load(ws, agent="reviewer", targets=too_many[:TARGETS_MAX])
    assert [s.path for s in loaded] == ["AGENTS.md"]


def test_the_command_line_exits_2_with_one_line(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    args = ["sources", str(ws), "--no-project-root", "--agent", "reviewer"]
    for i in range(TARGETS_MAX + 1):
        args += ["--target", f"src/f{i}.py"]
    result = harness_cli(*args)
    assert result.returncode == 2, result.stderr
    assert f"more than {TARGETS_MAX} targets" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
