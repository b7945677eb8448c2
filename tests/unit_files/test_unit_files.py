"""Rules and task-state files (``--rules``, ``--task-state``): one unit per line, or one
JSON value per line for ``.jsonl``; lines end at a newline only; bad text exits 2 naming the
line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness._unit_files import UnitFileError, read_unit_file, split_lines
from tests.cli import ACME_ARGS, harness_cli_bytes

ACME = ["debug", *ACME_ARGS]
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
