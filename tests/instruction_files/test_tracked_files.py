"""Tracked files are never ignored (CONTRACT section 9), checked through ``InstructionFiles``.

Real git repositories; an audit hook records every name opened, to show that nothing
untracked inside an ignored directory is read (the walk opens names relative to directory
descriptors, so the recorded path of an open is the name itself).
"""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.instruction_files import InstructionFiles, InstructionFilesSettings
from harness.runtime import Supervisor
from tests.workspace.ignore_cases import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

_OPENED: list[str] | None = None
_LOCK = threading.Lock()
_INSTALLED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], str | bytes):
        _OPENED.append(args[0] if isinstance(args[0], str) else args[0].decode(errors="replace"))


async def _load(root: Path) -> tuple[list[tuple[str, str]], tuple[str, ...], list[str]]:
    global _OPENED, _INSTALLED
    files = InstructionFiles(InstructionFilesSettings(walk_threads=1))
    with _LOCK:
        if not _INSTALLED:
            sys.addaudithook(_audit)  # process-wide; inert while _OPENED is None
            _INSTALLED = True
        _OPENED = opened = []
        try:
            with anyio.fail_after(30):
                async with Supervisor([files.child_spec()]):
                    found = await files.load(root, agent="a")
        finally:
            _OPENED = None
    return [(s.path, s.content) for s in found.sources], found.warnings, opened


async def test_a_file_added_with_add_f_despite_its_pattern_is_loaded(tmp_path: Path) -> None:
    """The issue's repository: a committed AGENTS.override.md later listed in .gitignore."""
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("AGENTS.override.md\n")
    (tmp_path / "AGENTS.override.md").write_text("the short override\n")
    (tmp_path / "AGENTS.md").write_text("the long file\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "AGENTS.override.md").write_text("untracked, ignored\n")
    (tmp_path / "pkg" / "AGENTS.md").write_text("pkg\n")
    git(tmp_path, "add", "-f", "AGENTS.override.md")
    sources, warnings, _ = await _load(tmp_path)
    # the untracked, ignored override is a local file: read too (it used to be skipped)
    assert sources == [
        ("AGENTS.override.md", "the short override\n"),
        ("pkg/AGENTS.override.md", "untracked, ignored\n"),
    ]
    assert warnings == ()


async def test_an_ignored_directory_is_entered_for_its_tracked_file_alone(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "AGENTS.md").write_text("root\n")
    sub = tmp_path / "build" / "sub"
    sub.mkdir(parents=True)
    (sub / "AGENTS.md").write_text("tracked\n")
    (sub / "AGENTS.override.md").write_text("SECRET untracked override\n")
    (tmp_path / "build" / ".gitignore").write_text("!*\n")  # git never reads it: build/ is ignored
    untracked = tmp_path / "build" / "untracked-only"
    untracked.mkdir()
    (untracked / "AGENTS.md").write_text("SECRET untracked\n")
    git(tmp_path, "add", "-f", "build/sub/AGENTS.md")
    sources, warnings, opened = await _load(tmp_path)
    assert sources == [("AGENTS.md", "root\n"), ("build/sub/AGENTS.md", "tracked\n")]
    assert warnings == ()  # inside an ignored directory untracked files are silent, as a prune
    assert "AGENTS.override.md" not in opened  # the untracked override was never opened
    assert "untracked-only" not in opened  # nor the directory holding only untracked files
    assert ".gitignore" in opened  # the root's (the test sees opens)
    assert sum(name == ".gitignore" for name in opened) == 1  # build/.gitignore is not read


async def test_a_symlink_to_a_file_ignored_by_a_posix_class_is_refused(tmp_path: Path) -> None:
    """The issue's leak: ``.env.[[:alpha:]]*`` never matched, so docs/AGENTS.md -> ../.env.local
    was followed and the key landed in the prompt."""
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".env.[[:alpha:]]*\n")
    (tmp_path / ".env.local").write_text("STRIPE_KEY=sk_live_1\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "AGENTS.md").symlink_to("../.env.local")
    sources, warnings, _ = await _load(tmp_path)
    assert sources == []
    assert len(warnings) == 1 and "ignored" in warnings[0] and ".env.local" in warnings[0]


async def test_info_exclude_applies_to_the_walk(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch/\n")
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "AGENTS.md").write_text("SECRET local notes\n")
    (tmp_path / "AGENTS.md").write_text("root\n")
    sources, warnings, _ = await _load(tmp_path)
    assert sources == [("AGENTS.md", "root\n")] and warnings == ()


async def test_an_exclude_file_that_cannot_be_applied_fails_closed(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_bytes(b"#" * (1024 * 1024 + 1))
    (tmp_path / "AGENTS.md").write_text("root\n")
    sources, warnings, _ = await _load(tmp_path)
    assert sources == []
    assert len(warnings) == 1 and warnings[0].startswith(".git/info/exclude: is over the")
