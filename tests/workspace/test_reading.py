"""The capped reader's paths: one read proving the end, a file longer than ``fstat`` said
(read on, to one byte past the cap), and the deny rules' by-name answers the walk uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.workspace import read_capped, read_file
from harness.workspace.deny import DenyRules


def _fd(path: Path) -> int:
    return os.open(path, os.O_RDONLY)


@pytest.mark.parametrize(
    ("size", "cap", "expected"),
    [
        (10, 100, 10),  # fstat right: one read, the end proved
        (3, 100, 10),  # the file is longer than fstat said: read on to its end
        (3, 5, 6),  # ... and stopped one byte past the cap
        (4, 4, 5),  # the first read already one byte past the cap
        (20, 100, 10),  # shorter than fstat said: what there is
    ],
)
def test_read_capped_reads_to_the_end_or_one_byte_past_the_cap(
    tmp_path: Path, size: int, cap: int, expected: int
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    fd = _fd(path)
    try:
        assert read_capped(fd, size, cap) == b"0123456789"[:expected]
    finally:
        os.close(fd)


def test_read_file_reads_whole_files_and_refuses_one_over_the_cap(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 8)
    (tmp_path / "empty").write_bytes(b"")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_file("a", cap=8, dir_fd=fd).data == b"x" * 8
        assert read_file("empty", cap=8, dir_fd=fd).data == b""
        over = read_file("a", cap=7, dir_fd=fd)
        assert (over.problem, over.size) == ("size", 8)
    finally:
        os.close(fd)


def test_a_name_is_allowed_by_name_only_if_no_pattern_denies_it_either_way() -> None:
    rules = DenyRules(("AGENTS.md/", "*.pem"))
    assert rules.entry("a/AGENTS.md", False) is None  # a file of that name: allowed
    assert not rules.allowed_name("AGENTS.md")  # a directory of that name is denied
    assert rules.entry("b/AGENTS.md", True) == "AGENTS.md/"
    assert rules.allowed_name("README.md") and "README.md" in rules.allowed_names
    assert not rules.allowed_name("key.pem") and "key.pem" not in rules.allowed_names
    anchored = DenyRules(("/secret",))  # a slash: the path decides, never the name alone
    assert not anchored.allowed_name("notes") and not anchored.allowed_names
