"""One symlink-target rule for instruction files and ``.AGENTS/``: ``SymlinkPolicy``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness._project_context import load_project_context
from harness.instruction_files import InstructionFilesSettings, discover
from harness.workspace import SymlinkPolicy, SymlinkRefusal

Writer = Callable[[str, str | bytes], Path]

_OVER_CAP = b"#" * (1024 * 1024 + 1)  # a .gitignore larger than any reader applies


def _link(ws: Path, rel: str, target: str) -> None:
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).symlink_to(target)


@pytest.fixture
def policies() -> Iterator[list[SymlinkPolicy]]:
    made: list[SymlinkPolicy] = []
    yield made
    for policy in made:
        policy.close()


def _policy(ws: Path, made: list[SymlinkPolicy]) -> SymlinkPolicy:
    made.append(SymlinkPolicy(os.path.realpath(ws), InstructionFilesSettings().vendored))
    return made[-1]


def test_refusal_kinds(
    ws: Path, write: Writer, tmp_path: Path, policies: list[SymlinkPolicy]
) -> None:
    write(".gitignore", "secrets/\n")
    write("docs/.gitignore", "*.key\n")
    root = os.path.realpath(ws)
    policy = _policy(ws, policies)
    assert policy.refusal(root) == SymlinkRefusal("workspace")
    assert policy.refusal(os.path.realpath(tmp_path / "outside" / "x.md")) == SymlinkRefusal(
        "outside"
    )
    assert policy.refusal(f"{root}/a/.git/config") == SymlinkRefusal(
        "pruned", "a/.git/config", ".git"
    )
    assert policy.refusal(f"{root}/node_modules") == SymlinkRefusal(
        "pruned", "node_modules", "node_modules"
    )
    assert policy.refusal(f"{root}/secrets/x/y.md") == SymlinkRefusal(
        "ignored", "secrets/x/y.md", "secrets/"
    )
    assert policy.refusal(f"{root}/docs/a.key") == SymlinkRefusal(
        "ignored", "docs/a.key", "docs/a.key"
    )
    assert policy.refusal(f"{root}/docs/a.md") is None


def test_each_gitignore_is_read_once_per_policy(
    ws: Path, write: Writer, policies: list[SymlinkPolicy]
) -> None:
    write(".gitignore", "*.env\n")
    root = os.path.realpath(ws)
    policy = _policy(ws, policies)
    assert policy.refusal(f"{root}/a.env") is not None
    write(".gitignore", "")  # not re-read: the rules seen first stay in force
    assert policy.refusal(f"{root}/b.env") is not None
    assert _policy(ws, policies).refusal(f"{root}/b.env") is None  # a new policy reads it afresh


def test_gitignore_that_cannot_be_applied_refuses_the_target(ws: Path, write: Writer) -> None:
    """Fail closed: an over-cap (or unreadable) .gitignore on the target's way might have
    ignored it, so the target is refused by both readers; an unrelated link still works."""
    write("private/.gitignore", _OVER_CAP)
    write("private/notes.md", "SECRET\n")
    write("public/notes.md", "public\n")
    _link(ws, "a/AGENTS.md", "../private/notes.md")
    _link(ws, "b/AGENTS.md", "../public/notes.md")
    _link(ws, ".AGENTS/overview.md", "../private/notes.md")
    _link(ws, ".AGENTS/glossary.md", "../public/notes.md")

    found = discover(ws)
    assert [(s.path, s.content) for s in found] == [("b/AGENTS.md", "public\n")]
    [warning] = [w for w in found.warnings if w.startswith("a/AGENTS.md: ")]
    assert "private/.gitignore is over the" in warning and "cannot be checked" in warning

    context = load_project_context(ws)
    assert [unit.id for unit in context.units] == [".AGENTS/glossary.md"]
    [warning] = context.warnings
    assert warning.startswith(
        ".AGENTS/overview.md: a symlink to private/notes.md, and private/.gitignore is over the"
    )  # the same words as the instruction-file warning: one wording of a refusal


@pytest.mark.parametrize("target", [".git", "node_modules"])
def test_a_target_named_git_or_vendored_is_refused_by_both(
    ws: Path, write: Writer, target: str
) -> None:
    """The last component counts too: a worktree's `.git` file is never read."""
    write(target, "gitdir: /elsewhere/.git/worktrees/w\n")
    _link(ws, "a/AGENTS.md", f"../{target}")
    _link(ws, ".AGENTS/overview.md", f"../{target}")
    found = discover(ws)
    assert list(found) == []
    assert any(
        w.startswith(f"a/AGENTS.md: skipped: a symlink into {target}/") for w in found.warnings
    )
    context = load_project_context(ws)
    assert context.units == ()
    assert context.warnings == (
        f".AGENTS/overview.md: a symlink into {target}/, which is never read; skipped",
    )


@pytest.mark.parametrize(
    ("target", "allowed"),
    [
        ("docs/rules.md", True),
        ("notes/keep.md", True),
        ("notes/drop.md", False),
        ("secrets/deep/key.md", False),
        ("node_modules/x/rules.md", False),
        (".git/config", False),
        ("lib/gen/out.md", False),
    ],
)
def test_instruction_files_and_project_context_agree(
    ws: Path, write: Writer, target: str, allowed: bool
) -> None:
    write(".gitignore", "notes/*\n!notes/keep.md\nsecrets/\n")
    write("lib/.gitignore", "gen/\n")
    write(target, "linked text\n")
    _link(ws, "x/AGENTS.md", f"../{target}")
    _link(ws, ".AGENTS/overview.md", f"../{target}")
    found = discover(ws)
    context = load_project_context(ws)
    assert ([s.path for s in found] == ["x/AGENTS.md"]) is allowed
    assert ([u.id for u in context.units] == [".AGENTS/overview.md"]) is allowed
    assert (found.warnings == ()) is allowed
    assert (context.warnings == ()) is allowed
