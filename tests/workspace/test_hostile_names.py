"""Hostile names never reach a terminal raw: every warning goes through the one escaper.

Run as users run it (``python -m harness`` in a subprocess): a directory named with an ESC
sequence and a newline, reached by refused symlinks from ``.AGENTS/`` and from an instruction
file, must show up escaped in ``harness sources`` and on the stderr of ``harness debug
--json`` (regression: the ``.AGENTS/`` refusal carried the raw name).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import harness_cli

EVIL = "evil\x1b[31m\nforged: line"


_cli = harness_cli


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / EVIL).mkdir(parents=True)
    (ws / EVIL / "secret.md").write_text("private\n")
    (ws / ".gitignore").write_text("evil*\n")  # the hostile directory is gitignored
    (ws / ".AGENTS").mkdir()
    (ws / ".AGENTS" / "overview.md").symlink_to(f"../{EVIL}/secret.md")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "AGENTS.md").symlink_to(f"../{EVIL}/secret.md")
    (ws / "AGENTS.md").write_text("root rules\n")
    return ws


def _assert_clean(text: str) -> None:
    assert "\x1b" not in text
    assert "forged: line" not in text.replace("\\x0aforged: line", "")  # only escaped


def test_sources_and_debug_json_escape_every_warning(hostile: Path) -> None:
    sources = _cli("sources", str(hostile))
    assert sources.returncode == 0, sources.stderr
    _assert_clean(sources.stdout + sources.stderr)
    assert ".AGENTS/overview.md: a symlink to evil\\x1b[31m\\x0aforged: line/secret.md" in (
        sources.stdout
    )
    assert "pkg/AGENTS.md: skipped: a symlink to evil\\x1b[31m\\x0aforged: line" in sources.stdout

    debug = _cli("debug", str(hostile), "--agent", "reviewer", "--json")
    assert debug.returncode == 0, debug.stderr
    _assert_clean(debug.stderr)
    lines = debug.stderr.splitlines()
    assert len(lines) == 2, lines  # one line per warning: none forged
    assert all(line.startswith("harness: warning: ") for line in lines), lines
