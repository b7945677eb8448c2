"""The instruction-file pages of ``docs/`` say what the code does: ``harness rules`` in the
command-line synopsis with exactly its options, and its worked example as it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from tests.workspace.ignore_cases import git

CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _options(text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]*", text)) - {"--help"}


def _synopsis_entry(command: str) -> str:
    text = CLI.read_text(encoding="utf-8")
    synopsis = text[text.index("```text\nharness debug") :]
    synopsis = synopsis[: synopsis.index("\n```")]
    entry = synopsis[synopsis.index(f"harness {command} ") :]
    following = re.search(r"\nharness ", entry)
    return entry[: following.start()] if following else entry


def test_the_synopsis_lists_exactly_the_options_of_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["rules", "--help"])
    assert exited.value.code == 0
    assert _options(_synopsis_entry("rules")) == _options(capsys.readouterr().out)


def _example() -> tuple[list[str], list[str]]:
    """The worked example's arguments and the lines it shows."""
    text = CLI.read_text(encoding="utf-8")
    start = text.index("  $ harness rules ")
    block = text[start : text.index("  ```", start)].splitlines()
    command, *shown = (line.removeprefix("  ") for line in block)
    return command.split()[2:], shown


def test_the_worked_example_of_rules_is_what_it_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mono = tmp_path / "mono"
    files = {
        ".gitignore": "# personal\nAGENTS.override.md\n",
        "AGENTS.md": "Run pnpm test.\n",
        "CLAUDE.md": "Keep diffs small.\n",
        "packages/parser/AGENTS.md": "Parser rules.\n",
        "packages/parser/AGENTS.override.md": "My override.\n",
        "packages/parser/.cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts\n---\nNo any.\n",
        "packages/parser/.cursor/rules/profiling.mdc": (
            "---\ndescription: How to profile the parser\n---\nUse --cpu-prof.\n"
        ),
        "packages/web/AGENTS.md": "Web rules.\n",
    }
    for rel, text in files.items():
        (mono / rel).parent.mkdir(parents=True, exist_ok=True)
        (mono / rel).write_text(text)
    git(mono, "init", "-q")
    monkeypatch.chdir(mono / "packages" / "parser")
    argv, shown = _example()
    assert main(argv) == 0
    printed = capsys.readouterr().out.replace(str(mono.resolve()), "/src/mono")
    assert printed.splitlines() == shown
