"""``.gitignore`` semantics checked against git itself on real trees."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.instruction_files import InstructionFilesSettings, discover
from tests.trees import display

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

DIRS = (
    "a",
    "a/b",
    "a/b/c",
    "b",
    "build",
    "src/build",
    "src/gen",
    "docs/gen",
    "docs/api/gen",
    "x.log",
    "keep",
    "tmp",
    "tmp/keep",
    "foo/bar",
    "foo/x/bar",
    "foo/x/y/bar",
    "deep/nested/build",
    "lib/vendor",
    "vendor/lib",
    "sp ace",
    "tail ",
)

PATTERNS = (
    "build/",
    "build",
    "/build",
    "*.log",
    "gen/",
    "docs/gen",
    "docs/**/gen",
    "**/gen",
    "foo/**/bar",
    "foo/*/bar",
    "a/**",
    "!a/b/",
    "*",
    "!*/",
    "*/",
    "!AGENTS.md",
    "b",
    "/a/b",
    "tmp/*",
    "!tmp/keep",
    "lib/",
    "**/vendor/",
    "a/b/c/",
    "AGENTS.md",
    "!/a/AGENTS.md",
    "x.lo?",
    "[bx]*",
    "deep/**/build",
    "sp\\ ace",
    "sp ace/",
    "#comment",
    "",
    "/*",
    "!/keep/",
    "deep/**/",
    "build/\t",
    "tail\\ ",
    "tail ",
)

NAMES_ONLY = InstructionFilesSettings(names=("AGENTS.md",), vendored=(), walk_threads=2)


def _tree(root: Path) -> None:
    (root / "AGENTS.md").write_text("root\n")
    for rel in DIRS:
        (root / rel).mkdir(parents=True, exist_ok=True)
        (root / rel / "AGENTS.md").write_text(f"{rel}\n")


def _git_visible(root: Path) -> set[str]:
    """The AGENTS.md files git does not ignore (untracked and not excluded)."""
    assert GIT is not None
    if not (root / ".git").exists():
        subprocess.run([GIT, "init", "-q", str(root)], check=True)
    out = subprocess.run(
        [GIT, "-c", "core.excludesFile=/dev/null", "-c", "core.quotePath=false",
         "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=root, check=True, capture_output=True,
    ).stdout  # fmt: skip
    paths = (os.fsdecode(path) for path in out.split(b"\0"))
    # As discovery shows paths (escapes for undecodable bytes and control characters).
    return {display(path) for path in paths if path.split("/")[-1] == "AGENTS.md"}


def _ours(root: Path) -> set[str]:
    return {source.path for source in discover(root, NAMES_ONLY)}


@pytest.mark.parametrize(
    "lines",
    [
        ["build/", "*.log", "/tmp"],
        ["*", "!*/", "!AGENTS.md"],  # the "ignore everything but" idiom
        ["a/**", "!a/b/", "!a/b/**"],
        ["tmp/*", "!tmp/keep"],
        ["docs/**/gen", "foo/**/bar", "!foo/x/bar"],
        ["**/vendor/", "lib/", "sp\\ ace"],
        ["[bx]*", "x.lo?", "!b"],
        ["/*", "!/keep/", "!/a/"],
        ["AGENTS.md", "!/a/AGENTS.md"],
        ["deep/**/"],  # directories strictly inside deep, not deep itself
        ["build/\t", "tail "],  # git keeps a trailing tab, trims an unescaped trailing space
        ["tail\\ "],  # an escaped trailing space is kept
    ],
)
def test_root_gitignore_agrees_with_git(tmp_path: Path, lines: list[str]) -> None:
    _tree(tmp_path)
    (tmp_path / ".gitignore").write_text("\n".join(lines) + "\n")
    assert _ours(tmp_path) == _git_visible(tmp_path)


def test_a_byte_order_mark_does_not_hide_the_first_pattern(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / ".gitignore").write_bytes(b"\xef\xbb\xbfbuild/\r\nsrc/\r\n")
    ours = _ours(tmp_path)
    assert ours == _git_visible(tmp_path)
    assert "build/AGENTS.md" not in ours and "src/build/AGENTS.md" not in ours


def test_nested_gitignores_agree_with_git(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "docs" / ".gitignore").write_text("!gen/\napi/\n")
    (tmp_path / "foo" / ".gitignore").write_text("/bar\nx/y/\n")
    (tmp_path / "a" / ".gitignore").write_text("b/c/\n")
    assert _ours(tmp_path) == _git_visible(tmp_path)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    root_lines=st.lists(st.sampled_from(PATTERNS), max_size=6),
    nested=st.lists(
        st.tuples(
            st.sampled_from(("a", "docs", "foo", "tmp", "src")),
            st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3),
        ),
        max_size=2,
    ),
)
def test_random_gitignores_agree_with_git(
    tmp_path_factory: pytest.TempPathFactory,
    root_lines: list[str],
    nested: list[tuple[str, list[str]]],
) -> None:
    root = tmp_path_factory.mktemp("gi")
    _tree(root)
    (root / ".gitignore").write_text("\n".join(root_lines) + "\n")
    for directory, lines in nested:
        (root / directory / ".gitignore").write_text("\n".join(lines) + "\n")
    assert _ours(root) == _git_visible(root), (root_lines, nested)


@pytest.mark.parametrize(
    "data",
    [
        b"private/\nzzz\x0b!private/\n",  # a vertical tab does not end a line for git
        b"private/\nzzz\x0c!private/\n",  # nor a form feed
        b"private/\nzzz\xc2\x85!private/\n",  # nor U+0085
        b"private/\nzzz\xe2\x80\xa8!private/\n",  # nor U+2028
        b"x\x0cy/\n",  # so this is one pattern naming the directory x<FF>y
        b"secret\xff/\n",  # a pattern spelled with a byte that is not UTF-8
        b"foo\r\r\n",  # one \r is stripped, not two
        b"private/\r\n!keep\r\n",
    ],
)
def test_lines_and_bytes_are_read_as_git_reads_them(tmp_path: Path, data: bytes) -> None:
    _tree(tmp_path)
    root = bytes(tmp_path)
    for name in (b"private", b"x\x0cy", b"secret\xff", b"foo", b"foo\r", b"keep"):
        directory = root + b"/" + name
        if not (tmp_path / os.fsdecode(name)).exists():
            os.mkdir(directory)
        with open(directory + b"/AGENTS.md", "wb") as handle:
            handle.write(name + b"\n")
    (tmp_path / ".gitignore").write_bytes(data)
    assert _ours(tmp_path) == _git_visible(tmp_path)
