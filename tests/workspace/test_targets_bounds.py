"""Targets that cannot be paths, and targets that would take long to resolve.

A target over ``PATH_MAX`` bytes, with a NUL or with a character the file system cannot
encode is refused with ``ArgumentError`` (a ``HarnessError`` and a ``ValueError``) before
anything is looked up; a workspace path with a NUL is a ``WorkspaceNotFoundError``. What is
resolved on the event loop is bounded (``ON_LOOP`` components); more moves to a worker
thread, with the same result.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessError
from harness.errors import ArgumentError
from harness.instruction_files import InstructionFiles, WorkspaceNotFoundError, discover
from harness.runtime import Supervisor
from harness.workspace import resolve_workspace
from harness.workspace._targets import ON_LOOP, TARGET_MAX, _OverBudget, resolve_scope, scope_of


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg" / "src").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root\n")
    (root / "pkg" / "AGENTS.md").write_text("pkg\n")
    return root


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("a/" * 125_000, r"250000 bytes, longer than any path may be \(4096\)"),
        ("x" * (TARGET_MAX + 1), "4097 bytes"),
        ("pkg/a\0b", "contains a NUL character"),
        ("pkg/\ud800", "cannot be encoded as a file name"),
    ],
)
async def test_a_target_that_cannot_be_a_path_is_an_argument_error(
    ws: Path, target: str, why: str
) -> None:
    files = InstructionFiles()
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            with pytest.raises(ArgumentError, match=why) as caught:
                await files.load(ws, agent="a", targets=[target])
    assert isinstance(caught.value, HarnessError) and isinstance(caught.value, ValueError)
    assert len(str(caught.value)) < 300  # the message shows the start of a long target


def test_a_target_of_exactly_path_max_bytes_is_accepted(ws: Path) -> None:
    found = discover(ws, targets=["pkg/" + "x" * (TARGET_MAX - 4)])
    assert [source.path for source in found] == ["AGENTS.md", "pkg/AGENTS.md"]


@pytest.mark.parametrize("workspace", ["/tmp/a\0b", "/tmp/\ud800"])
async def test_a_workspace_that_cannot_be_a_path_is_not_found(workspace: str) -> None:
    with pytest.raises(WorkspaceNotFoundError, match="cannot be a path"):
        resolve_workspace(workspace)
    with anyio.fail_after(10):
        async with Harness() as harness:
            with pytest.raises(HarnessError) as caught:
                await harness.build_prompt(workspace, agent="reviewer")
    assert isinstance(caught.value, FileNotFoundError)


def test_resolution_on_the_loop_stops_after_its_budget(ws: Path) -> None:
    root = resolve_workspace(ws)
    scope_of(root, ["pkg/src/a.py"], prune=(), budget=ON_LOOP)  # a few components: within it
    long = "pkg/" + "x/" * ON_LOOP  # more components than the loop may examine
    with pytest.raises(_OverBudget):
        scope_of(root, [long], prune=(), budget=ON_LOOP)


def test_a_symlink_expanding_to_a_long_path_counts_against_the_budget(ws: Path) -> None:
    root = resolve_workspace(ws)
    os.symlink("/".join(["src"] + ["nowhere"] * 300), ws / "pkg" / "far")
    with pytest.raises(_OverBudget):
        scope_of(root, ["pkg/far/x.py"], prune=(), budget=ON_LOOP)


async def test_over_the_budget_the_scope_is_the_same_from_a_thread(ws: Path) -> None:
    root = resolve_workspace(ws)
    targets = ["pkg/src/a.py", "pkg/" + "../pkg/" * 200 + "src/b.py", "README.md"]
    with anyio.fail_after(10):
        scope = await resolve_scope(root, targets, prune=())
    assert scope == scope_of(root, targets, prune=())
    assert scope.directories == ("", "pkg", "pkg/src")


def test_a_scopes_directories_are_a_tuple_keyed_by_their_digest(ws: Path) -> None:
    root = resolve_workspace(ws)
    one = scope_of(root, ["pkg/src/a.py"], prune=()).directories
    two = scope_of(root, ["pkg/src/b.py"], prune=()).directories
    assert one == two == ("", "pkg", "pkg/src") and hash(one) == hash(two)
    assert {(root, one): 1}[(root, two)] == 1  # a cache hit, whatever the spelling
    assert one != scope_of(root, ["pkg/x.py"], prune=()).directories
