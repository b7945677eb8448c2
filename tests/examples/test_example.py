"""The shipped example: its decoy, its database, and the README command that CI runs."""

from __future__ import annotations

import importlib.util
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

from harness.workspace._ignore import IgnoreChain, IgnoreFile

ROOT = Path(__file__).resolve().parents[2]
ACME = ROOT / "examples" / "acme"
LAYERS = ("identity", "instruction_files", "project_context", "business_rules", "task_state")


def readme_debug_command() -> str:
    """The ``python -m harness debug ...`` part of the README's one-line quick start."""
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if "python -m harness debug" in line and "pip install" in line:
            return line[line.index("python -m harness debug") :].strip()
    raise AssertionError("the README has no one-line quick start with the debug command")


def rows(path: Path) -> list[tuple[str, ...]]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute(
            "SELECT project_id, agent_slug, content, updated_at FROM agent_instructions "
            "ORDER BY project_id, agent_slug"
        ).fetchall()
    finally:
        connection.close()


def test_the_decoy_exists_and_is_gitignored() -> None:
    # A fresh checkout must hold the decoy (committed with `git add -f`), or nothing is shown.
    decoy = ACME / "tmp" / "upstream-checkout" / "AGENTS.md"
    assert decoy.is_file()
    rules, _ = IgnoreFile.parse("", (ACME / ".gitignore").read_bytes())
    chain = IgnoreChain((rules,))
    assert chain.ignored("tmp", "tmp", True) or chain.ignored(
        "tmp/upstream-checkout", "upstream-checkout", True
    )


def test_the_shipped_database_matches_its_generator(tmp_path: Path) -> None:
    module_spec = importlib.util.spec_from_file_location(
        "make_acme_db", ROOT / "examples/make_acme_db.py"
    )
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    fresh = tmp_path / "acme.db"
    module.build(fresh)
    assert rows(ROOT / "examples" / "acme.db") == rows(fresh)
    assert ("acme", "reviewer") in [row[:2] for row in rows(fresh)]


def test_ci_runs_exactly_the_readme_command() -> None:
    command = readme_debug_command()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in [line.strip() for line in ci]


def test_the_readme_command_shows_five_non_empty_layers() -> None:
    argv = shlex.split(readme_debug_command())
    assert argv[:3] == ["python", "-m", "harness"]
    done = subprocess.run(
        [sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    table = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.strip()}
    for layer in LAYERS:
        kept = int(table[layer][5])
        assert kept > 0, f"{layer} is empty in the README command's output"
        assert table[layer][2] not in ("~0", "0")
    assert "DECOY" not in done.stdout
