"""What a new user and an attacker tripped on (issue 17): each item, through the real CLI,
real files and a real SQLite database."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from harness.unit_files import UnitFileError, read_unit_file, split_lines
from tests.cli import ACME_ARGS, ROOT, harness_cli_bytes

ACME = ["debug", *ACME_ARGS]
ACME = [
    "debug",
    "examples/acme",
    "--agent",
    "reviewer",
    "--project-id",
    "acme",
    "--db",
    "examples/acme.db",
]


cli = harness_cli_bytes


def one_error_line(result: subprocess.CompletedProcess[bytes]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), lines
    return lines[0]


@pytest.mark.parametrize("name", ["r.txt", "r.jsonl"])
def test_invalid_utf8_in_a_rules_file_exits_2_naming_the_line(tmp_path: Path, name: str) -> None:
    rules = tmp_path / name
    first = b'"rule one"' if name.endswith(".jsonl") else b"rule one"
    rules.write_bytes(first + b"\n\xff\xfe bad\n")
    line = one_error_line(cli(*ACME, "--rules", str(rules)))
    assert f"{rules}:2: not valid UTF-8" in line


def test_lines_end_at_newline_only(tmp_path: Path) -> None:
    rules = tmp_path / "rules.txt"
    rules.write_text("one\x0cstill one\r\ntwo\u2028still two\nthree\x1c\x1d\x1e\x85x\n")
    units = read_unit_file(rules)
    assert [u.text for u in units] == [
        "one\x0cstill one",
        "two\u2028still two",
        "three\x1c\x1d\x1e\x85x",
    ]
    assert [u.id for u in units] == ["rules.txt:1", "rules.txt:2", "rules.txt:3"]


def test_jsonl_with_a_raw_line_separator_is_one_valid_line(tmp_path: Path) -> None:
    state = tmp_path / "state.jsonl"
    lines = [json.dumps({"id": "goal", "text": "a\u2028b"}, ensure_ascii=False), '"c\x85d"']
    state.write_text("\n".join(lines) + "\n", encoding="utf-8")
    units = read_unit_file(state)
    assert [(u.id, u.text) for u in units] == [("goal", "a\u2028b"), ("state.jsonl:2", "c\x85d")]
    result = cli(*ACME, "--task-state", str(state), "--json")
    assert result.returncode == 0, result.stderr
    kept = json.loads(result.stdout)["layers"][4]["kept"]
    assert kept == ["goal", "state.jsonl:2"]


def test_split_lines_keeps_one_carriage_return_rule() -> None:
    assert split_lines("a\r\nb\r\r\nc") == ["a", "b\r", "c"]
    assert split_lines("") == []
    assert split_lines("\n") == [""]


def test_unit_file_errors_are_harness_errors(tmp_path: Path) -> None:
    from harness.errors import HarnessError

    with pytest.raises(UnitFileError) as caught:
        read_unit_file(tmp_path / "missing.txt")
    assert isinstance(caught.value, HarnessError) and isinstance(caught.value, ValueError)


def test_an_empty_project_id_is_bad_input() -> None:
    line = one_error_line(cli(*ACME[:4], "--project-id", ""))
    assert "--project-id is empty" in line


def test_text_prints_exactly_the_prompt_bytes() -> None:
    as_text = cli(*ACME, "--text")
    as_json = cli(*ACME, "--json")
    assert as_text.returncode == 0 and as_json.returncode == 0
    import hashlib

    digest = json.loads(as_json.stdout)["digest"]
    assert hashlib.sha256(as_text.stdout).hexdigest() == digest


def test_text_and_json_are_exclusive() -> None:
    one_error_line(cli(*ACME, "--text", "--json"))


def test_a_layer_emptied_by_its_budget_is_a_warning_and_the_report_says_why() -> None:
    result = cli(*ACME, "--budget", "identity=10", "--budget", "instruction_files=5")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert "warnings   none" not in out
    assert "the identity layer is empty: its budget of 10 tokens dropped all 1 unit(s)" in out
    assert "the instruction_files layer is empty" in out
    # the reason under the layer, from its notes
    assert "why      layer needs 39 tokens, over its budget of 10; dropped whole" in out
    stderr = cli(*ACME, "--budget", "identity=10", "--json").stderr.decode()
    assert "harness: warning: the identity layer is empty" in stderr


def test_sources_aligns_the_size_column_after_long_paths(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / "e"
    deep.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("root\n")
    (deep / "AGENTS.md").write_text("deep\n")
    result = cli("sources", str(tmp_path))
    assert result.returncode == 0, result.stderr
    rows = [
        line
        for line in result.stdout.decode().splitlines()
        if line.endswith(tuple("0123456789abcdef")) and " B " in line
    ]
    assert len(rows) == 2
    assert len({row.index(" B ") for row in rows}) == 1, rows


def test_hostile_names_in_every_warning_are_escaped(tmp_path: Path) -> None:
    evil = tmp_path / "x\x1b[31mred\nline"
    evil.mkdir()
    (evil / "AGENTS.md").write_bytes(b"\xff\xfe invalid\n")  # a warning naming the directory
    (evil / "secret.md").write_text("secret\n")
    (tmp_path / ".gitignore").write_text("x*\n")  # the hostile directory is ignored...
    (tmp_path / ".AGENTS").mkdir()
    # ... so this link is refused, and the refusal names the ignored directory
    (tmp_path / ".AGENTS" / "notes.md").symlink_to(evil / "secret.md")
    for args in (
        ["sources", str(tmp_path)],
        ["debug", str(tmp_path), "--agent", "reviewer", "--json"],
    ):
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        for stream in (result.stdout, result.stderr):
            text = stream.decode("utf-8", "replace")
            assert "\x1b" not in text
            assert "red\nline" not in text


def test_the_license_file_matches_the_declared_license() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text()


def test_a_read_only_load_of_a_wal_database_leaves_side_files(tmp_path: Path) -> None:
    """SECURITY.md documents this: SQLite, not harness, creates them on a read-only open."""
    import anyio

    from harness import Harness

    db = tmp_path / "wal.db"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        from harness.instruction_files import SCHEMA_SQL

        connection.executescript(SCHEMA_SQL)
        connection.execute(
            "INSERT INTO agent_instructions VALUES ('p', 'reviewer', 'x', '2026-01-01')"
        )
    connection.close()
    (tmp_path / "ws").mkdir()

    async def load() -> None:
        with anyio.fail_after(30):
            async with Harness(database=db) as h:
                await h.instruction_files.load(tmp_path / "ws", agent="reviewer", project_id="p")

    anyio.run(load)
    assert (tmp_path / "wal.db-shm").exists() or (tmp_path / "wal.db-wal").exists()
    assert "-wal" in (ROOT / "SECURITY.md").read_text()
