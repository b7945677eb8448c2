"""No race leads a read outside the workspace: an attacker swapping directories for symlinks.

Another process (true parallelism, no GIL between attacker and walk) swaps, as fast as it can:

- ``ws/a`` (a real directory with an ``AGENTS.md`` and a subdirectory) for a symlink to an
  outside tree whose every directory holds an ``AGENTS.md`` with a marker;
- ``ws/c`` (the directory a committed ``ws/b/AGENTS.md -> ../c/AGENTS.md`` points into) for a
  symlink to another outside tree (the symlink policy's check and its open must be one);
- ``ws/.AGENTS`` for a symlink to an outside ``.AGENTS``-shaped tree.

Meanwhile the test runs many loads (discovery on one and on several threads, and the
``.AGENTS/`` loader). No marker may ever appear, and every warning must be one of the
documented ones (a directory or file that vanished or turned into a symlink mid-read). Bounded:
``WALKS`` loads or ``BUDGET`` seconds, whichever comes first. Against the path-based walk it
replaced, this test saw outside text in about one load in ten (267 to 352 of 3,000, through
all three swaps).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness._project_context import load_project_context
from harness.instruction_files import InstructionFilesSettings, discover
from harness.instruction_files.discovery import _incremental as incremental
from harness.workspace import resolve_workspace

MARKER = "OUTSIDE-TENANT-SECRET"
WALKS = 3000
BUDGET = 6.0  # seconds

_ATTACKER = r"""
import os, sys
ws, outside = sys.argv[1], sys.argv[2]
pairs = [("a", "tenant1"), ("c", "tenant2"), (".AGENTS", "tenant3")]
for name, tenant in pairs:
    os.symlink(os.path.join(outside, tenant), os.path.join(ws, name + ".link"))
sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    for name, _ in pairs:
        real, link, moved = (os.path.join(ws, name + suffix) for suffix in ("", ".link", ".real"))
        os.rename(real, moved)  # the real directory steps aside ...
        os.rename(link, real)   # ... a symlink to the outside takes its name ...
        os.rename(real, link)   # ... and both go back
        os.rename(moved, real)
"""

# Documented warnings a load may give while its tree changes under it.
_ALLOWED = re.compile(
    r"^[^:]+: ("
    r"directory skipped: it cannot be read \(.+\)"
    r"|skipped: it cannot be (examined|opened|read) \(.+\)"
    r"|skipped: a symlink whose real path lies outside the workspace"
    r"|skipped: a symlink to a directory, not a regular file"
    r"|skipped: a directory, not a regular file"
    r"|skipped: the same file as [^ ]+ \(hard link or symlink\); loaded once"
    r"|is a symlink; not followed"
    r"|cannot be (read|listed) \(.+\); skipped"
    r"|a symlink whose real path lies outside the workspace; skipped"
    r"|(skipped: )?a symlink to [^ ]+, and [^ ]+ cannot be examined \(.+\), so whether it"
    r" ignores the target cannot be checked(; skipped)?"
    r")$"
)


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    for rel, text in {
        "AGENTS.md": "root rules\n",
        "a/AGENTS.md": "a rules\n",
        "a/deep/AGENTS.md": "a deep rules\n",
        "c/AGENTS.md": "c rules\n",
        ".AGENTS/overview.md": "overview\n",
    }.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "b").mkdir()
    (ws / "b" / "AGENTS.md").symlink_to("../c/AGENTS.md")
    for tenant in ("tenant1", "tenant2"):
        for rel in ("AGENTS.md", "deep/AGENTS.md", "x/y/AGENTS.md"):
            (outside / tenant / rel).parent.mkdir(parents=True, exist_ok=True)
            (outside / tenant / rel).write_text(f"{MARKER} {tenant} {rel}\n")
    (outside / "tenant3").mkdir(parents=True)
    (outside / "tenant3" / "overview.md").write_text(f"{MARKER} tenant3\n")
    return ws, outside


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX symlinks and renames")
def test_swapping_directories_for_symlinks_never_leaks_outside_text(tmp_path: Path) -> None:
    ws, outside = _tree(tmp_path)
    attacker = subprocess.Popen(
        [sys.executable, "-c", _ATTACKER, str(ws), str(outside)],
        stdout=subprocess.PIPE,
        text=True,
    )
    wins: list[str] = []  # one entry per load that read outside text: which tenants
    odd: list[str] = []
    walks = 0
    try:
        assert attacker.stdout is not None and attacker.stdout.readline() == "ready\n"
        settings = (
            InstructionFilesSettings(walk_threads=1),
            InstructionFilesSettings(walk_threads=3),
        )
        deadline = time.monotonic() + BUDGET
        while walks < WALKS and time.monotonic() < deadline:
            found = discover(ws, settings[walks % 2])
            context = load_project_context(ws)
            walks += 1
            texts = [s.content for s in found] + [unit.text for unit in context.units]
            leaked = sorted({text.split()[1] for text in texts if MARKER in text})
            if leaked:
                wins.append("+".join(leaked))
            odd.extend(w for w in (*found.warnings, *context.warnings) if not _ALLOWED.match(w))
        assert attacker.poll() is None, "the attacker stopped early: the race was not run"
    finally:
        attacker.kill()
        attacker.wait()
    assert not wins, f"outside text read in {len(wins)} loads of {walks}: {sorted(set(wins))}"
    assert not odd, odd[:5]
    assert walks >= 100, f"only {walks} loads in the budget"
    print(f"{walks} loads, no outside text")


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX symlinks and renames")
def test_incremental_reloads_under_the_same_attack_never_leak_outside_text(tmp_path: Path) -> None:
    """Reloads from a snapshot start inside ``a/``, ``a/deep/`` (opened from the root one
    ``O_NOFOLLOW`` step at a time) and re-read ``b/``'s symlink while ``a``, ``c`` swap."""
    ws, outside = _tree(tmp_path)
    settings = InstructionFilesSettings(walk_threads=1)
    root = resolve_workspace(ws)
    _, snapshot = incremental.walk(root, settings)
    dirt = frozenset({"a/AGENTS.md", "a/deep/AGENTS.md", "a/deep", "b/AGENTS.md"})
    attacker = subprocess.Popen(
        [sys.executable, "-c", _ATTACKER, str(ws), str(outside)],
        stdout=subprocess.PIPE,
        text=True,
    )
    wins: list[str] = []
    odd: list[str] = []
    walks = 0
    try:
        assert attacker.stdout is not None and attacker.stdout.readline() == "ready\n"
        deadline = time.monotonic() + BUDGET / 2
        base = snapshot
        while walks < WALKS and time.monotonic() < deadline:
            found, after = incremental.walk(root, settings, base=(base, dirt))
            base = after if walks % 2 else snapshot  # chained reloads and reloads from the first
            walks += 1
            leaked = sorted({s.content.split()[1] for s in found if MARKER in s.content})
            if leaked:
                wins.append("+".join(leaked))
            odd.extend(w for w in found.warnings if not _ALLOWED.match(w))
        assert attacker.poll() is None, "the attacker stopped early: the race was not run"
    finally:
        attacker.kill()
        attacker.wait()
    assert not wins, f"outside text read in {len(wins)} reloads of {walks}: {sorted(set(wins))}"
    assert not odd, odd[:5]
    assert walks >= 100, f"only {walks} reloads in the budget"
