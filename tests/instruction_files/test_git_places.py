"""Git files outside ``<workspace>/.git`` reach the cache: ``invalidate`` of a linked
worktree's index or ``info/exclude`` (in the main repository), or of the target of a
symlinked ``.git/info/exclude``, makes the next load read them again. Real git, real files."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from harness.instruction_files import InstructionFiles, InstructionFilesSettings, discover
from harness.runtime import Supervisor
from tests.workspace.ignore_cases import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SETTINGS = InstructionFilesSettings(walk_threads=1)


def _worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A main repository with one commit and a linked worktree of it: (main, worktree)."""
    main, linked = tmp_path / "main", tmp_path / "linked"
    main.mkdir()
    git(main, "init", "-q")
    (main / "AGENTS.md").write_text("root rules\n")
    (main / ".gitignore").write_text("extra/\n")
    git(main, "add", "AGENTS.md", ".gitignore")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    git(main, "worktree", "add", "-q", str(linked))
    return main.resolve(), linked.resolve()


def _paths(found: object) -> list[str]:
    return [source.path for source in found]  # type: ignore[attr-defined]


async def _check(files: InstructionFiles, root: Path, *, has: str, present: bool) -> None:
    found = await files.load(root, agent="a")
    assert found == discover(root, SETTINGS)
    assert (has in _paths(found)) is present


async def test_a_linked_worktrees_exclude_file_in_the_main_repository(tmp_path: Path) -> None:
    main, linked = _worktree(tmp_path)
    (linked / "local").mkdir()
    (linked / "local" / "AGENTS.md").write_text("untracked\n")
    exclude = main / ".git" / "info" / "exclude"
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(30):
        async with Supervisor([files.child_spec()]):
            await _check(files, linked, has="local/AGENTS.md", present=True)
            exclude.parent.mkdir(exist_ok=True)
            exclude.write_text("local/\n")
            files.invalidate(exclude)
            await _check(files, linked, has="local/AGENTS.md", present=False)


async def test_a_linked_worktrees_index_in_the_main_repository(tmp_path: Path) -> None:
    main, linked = _worktree(tmp_path)
    (linked / "extra").mkdir()
    (linked / "extra" / "AGENTS.md").write_text("ignored until added\n")
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(30):
        async with Supervisor([files.child_spec()]):
            await _check(files, linked, has="extra/AGENTS.md", present=False)
            git(linked, "add", "-f", "extra/AGENTS.md")  # the worktree's own index changes
            index = main / ".git" / "worktrees" / "linked" / "index"
            assert index.is_file()
            files.invalidate(index)
            await _check(files, linked, has="extra/AGENTS.md", present=True)
            git(linked, "rm", "-q", "--cached", "extra/AGENTS.md")
            files.invalidate(main / ".git" / "worktrees" / "linked")  # its directory works too
            await _check(files, linked, has="extra/AGENTS.md", present=False)


async def test_a_symlinked_exclude_file(tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    git(repo, "init", "-q")
    (repo / "local").mkdir()
    (repo / "local" / "AGENTS.md").write_text("untracked\n")
    target = elsewhere / "exclude"
    target.write_text("")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(target)
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(30):
        async with Supervisor([files.child_spec()]):
            await _check(files, repo.resolve(), has="local/AGENTS.md", present=True)
            target.write_text("local/\n")
            files.invalidate(target)  # what a watcher of the real file reports
            await _check(files, repo.resolve(), has="local/AGENTS.md", present=False)
