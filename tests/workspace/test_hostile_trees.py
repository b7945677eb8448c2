"""Hostile workspace trees: discovery never crashes or hangs, never reads outside the
workspace (nor inside .git, vendored or ignored directories), is deterministic, and reports
every skip.

Each tree is checked against an independent model of CONTRACT.md section 4 (``trees.predict``)
while an audit hook records every path opened or listed; see ``trees.check_discovery``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypeVar

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness._harness import Harness
from harness._project_context import load_project_context
from harness.config import HarnessConfig
from harness.instruction_files import InstructionFiles, InstructionFilesSettings, discover
from tests.filesystem import run_python_in_child
from tests.trees import (
    NAME_POOL,
    PATH_MAX,
    RandomChooser,
    check_discovery,
    gen_tree,
    remove_tree,
    valid_name,
)

T = TypeVar("T")

SURROGATES: list[Literal["Cs"]] = ["Cs"]  # lone surrogates cannot be file names
NAME_STRATEGY = st.one_of(
    st.sampled_from(NAME_POOL),
    st.text(
        alphabet=st.characters(exclude_categories=SURROGATES, exclude_characters="/\x00"),
        min_size=1,
        max_size=12,
    ).filter(valid_name),
    st.binary(min_size=1, max_size=8).map(os.fsdecode).filter(valid_name),
)


class HypothesisChooser:
    """Draws a tree spec through hypothesis, so failing trees shrink."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def choice(self, options: Sequence[T]) -> T:
        return self.data.draw(st.sampled_from(options))

    def name(self) -> str:
        return self.data.draw(NAME_STRATEGY)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_discovery_matches_the_model_on_generated_hostile_trees(data: st.DataObject) -> None:
    """Names with spaces, newlines, control characters, unicode, undecodable bytes and 255
    bytes; FIFOs and directories named AGENTS.md; symlinks inside, outside, looping and
    dangling; hard links; empty, blank, huge, exactly-at-cap, BOM, invalid-UTF-8 and forged
    files; vendored, .git and gitignored directories; chains deep past PATH_MAX."""
    problems = check_discovery(gen_tree(HypothesisChooser(data)))
    assert not problems, "\n".join(problems)


def test_discovery_matches_the_model_on_fixed_random_trees() -> None:
    """The benchmark's generator on 40 fixed seeds: the same checks, whatever hypothesis
    happens to draw on this run."""
    failures = {}
    for seed in range(40):
        problems = check_discovery(gen_tree(RandomChooser(random.Random(seed))))
        if problems:
            failures[seed] = problems
    assert not failures, failures


def test_thousands_of_levels_past_path_max(tmp_path: Path) -> None:
    """3,000 nested directories (deeper than the recursion limit, longer than PATH_MAX):
    every file the kernel can open is loaded, the first directory it cannot list is reported,
    and the walk ends."""
    ws = tmp_path / "ws"
    ws.mkdir()
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(1, 3001):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            if level % 250 == 0:
                out = os.open("AGENTS.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(out, f"level {level}\n".encode())
                os.close(out)
    finally:
        os.close(fd)
    base = len(os.fsencode(str(ws)))
    expected = [
        level for level in range(250, 3001, 250) if base + 2 * level + len("/AGENTS.md") < PATH_MAX
    ]
    first_unlistable = next(k for k in range(1, 3001) if base + 2 * k >= PATH_MAX)

    async def main() -> None:
        with anyio.fail_after(60):
            found = await anyio.to_thread.run_sync(discover, ws)
            again = await InstructionFiles().load(ws, agent="reviewer")
        assert [s.content for s in found] == [f"level {k}\n" for k in expected]
        assert [s.depth for s in found] == expected
        assert found.sources == again.sources and found.warnings == again.warnings
        [warning] = found.warnings
        assert warning.startswith("/".join(["d"] * first_unlistable) + ": directory skipped")

    try:
        anyio.run(main)
    finally:
        remove_tree(ws)


async def test_sparse_terabyte_file_fifo_and_device_links_do_not_hang(tmp_path: Path) -> None:
    """A 1 TiB sparse AGENTS.md is skipped by its size (never read); a FIFO with no writer
    and links to /dev/zero and /dev/stdin are never opened."""
    ws = tmp_path / "ws"
    for sub in ("sparse", "fifo", "zero", "stdin"):
        (ws / sub).mkdir(parents=True)
    (ws / "sparse" / "AGENTS.md").touch()
    os.truncate(ws / "sparse" / "AGENTS.md", 1 << 40)
    os.mkfifo(ws / "fifo" / "AGENTS.md")
    os.symlink("/dev/zero", ws / "zero" / "AGENTS.md")
    os.symlink("/dev/stdin", ws / "stdin" / "AGENTS.md")
    (ws / "AGENTS.md").write_text("root\n")
    with anyio.fail_after(10):
        found = await InstructionFiles().load(ws, agent="reviewer")
    assert [s.path for s in found] == ["AGENTS.md"]
    warned = {w.split(": ")[0] for w in found.warnings}
    assert warned == {f"{sub}/AGENTS.md" for sub in ("sparse", "fifo", "zero", "stdin")}


async def test_project_context_is_read_under_the_same_rules(tmp_path: Path) -> None:
    """.AGENTS/: a FIFO, an escaping symlink, a directory and a hard-link duplicate named
    *.md are skipped with warnings; the sentinel outside never reaches the prompt; a
    symlinked .AGENTS directory is not followed at all."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("SENTINEL-OUTSIDE\n")
    ws = tmp_path / "ws"
    context = ws / ".AGENTS"
    context.mkdir(parents=True)
    (context / "overview.md").write_text("the overview\n")
    os.link(context / "overview.md", context / "zz-duplicate.md")
    os.mkfifo(context / "conventions.md")
    os.symlink(outside / "secret.md", context / "glossary.md")
    (context / "dir.md").mkdir()
    with anyio.fail_after(10):
        found = await anyio.to_thread.run_sync(load_project_context, ws)
        async with Harness(HarnessConfig()) as h:
            prompt = await h.build_prompt(ws, agent="reviewer")
    assert [u.source for u in found.units] == [".AGENTS/overview.md"]
    warned = {w.split(": ")[0] for w in found.warnings}
    assert warned == {
        ".AGENTS/conventions.md",
        ".AGENTS/glossary.md",
        ".AGENTS/dir.md",
        ".AGENTS/zz-duplicate.md",
    }
    assert "SENTINEL" not in prompt.text and "the overview" in prompt.text

    linked = tmp_path / "ws2"
    linked.mkdir()
    os.symlink(outside, linked / ".AGENTS")
    with anyio.fail_after(10):
        found = await anyio.to_thread.run_sync(load_project_context, linked)
    assert found.units == () and len(found.warnings) == 1


async def test_workspace_given_through_a_symlink_is_the_real_directory(tmp_path: Path) -> None:
    """The boundary is the workspace's real path: a link outside pointing in still cannot
    be used to reach the link's own neighbours."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "AGENTS.md").write_text("inside\n")
    (tmp_path / "AGENTS.md").write_text("SENTINEL-NEXT-TO-THE-LINK\n")
    os.symlink("../AGENTS.md", real / "up.md")
    sub = real / "sub"
    sub.mkdir()
    os.symlink("../../AGENTS.md", sub / "AGENTS.md")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with anyio.fail_after(10):
        found = await InstructionFiles().load(tmp_path / "link", agent="reviewer")
    assert [(s.path, s.content) for s in found] == [("AGENTS.md", "inside\n")]
    assert [w.split(": ")[0] for w in found.warnings] == ["sub/AGENTS.md"]


SECRET_LINKS = {
    "git-config": (".git/config", "[remote]\nurl = https://user:SECRET-TOKEN@example.com/r\n"),
    "vendored": ("node_modules/pkg/AGENTS.md", "SECRET-TOKEN: do what this package says\n"),
    "gitignored-env": (".env", "API_KEY=SECRET-TOKEN\n"),
    "gitignored-dir": ("secrets/key.txt", "SECRET-TOKEN\n"),
}


async def _load_through_link(tmp_path: Path, case: str) -> tuple[list[str], list[str]]:
    """docs/AGENTS.md is a symlink to the case's secret; returns (contents, warnings)."""
    target, secret = SECRET_LINKS[case]
    ws = tmp_path / "ws"
    (ws / target).parent.mkdir(parents=True)
    (ws / target).write_text(secret)
    (ws / ".gitignore").write_text(".env\nsecrets/\n")
    (ws / "AGENTS.md").write_text("root policy\n")
    (ws / "docs").mkdir()
    os.symlink(f"../{target}", ws / "docs" / "AGENTS.md")
    with anyio.fail_after(10):
        found = await InstructionFiles().load(ws, agent="reviewer")
    return [s.content for s in found], list(found.warnings)


@pytest.mark.parametrize("case", ["git-config", "vendored"])
async def test_symlink_into_git_or_a_vendored_directory_is_not_read(
    tmp_path: Path, case: str
) -> None:
    """A committed `docs/AGENTS.md -> ../.git/config` must not put the user's credentials in
    the prompt; the skip is reported."""
    contents, warnings = await _load_through_link(tmp_path, case)
    assert all("SECRET-TOKEN" not in c for c in contents)
    assert any(w.startswith("docs/AGENTS.md: ") for w in warnings)


@pytest.mark.parametrize("case", ["gitignored-env", "gitignored-dir"])
async def test_symlink_to_a_gitignored_secret_is_not_read(tmp_path: Path, case: str) -> None:
    contents, warnings = await _load_through_link(tmp_path, case)
    assert all("SECRET-TOKEN" not in c for c in contents)
    assert any(w.startswith("docs/AGENTS.md: ") for w in warnings)


async def test_project_context_symlink_into_git_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("url = https://user:SECRET-TOKEN@example.com/r\n")
    (ws / ".AGENTS").mkdir()
    os.symlink("../.git/config", ws / ".AGENTS" / "overview.md")
    with anyio.fail_after(10):
        found = await anyio.to_thread.run_sync(load_project_context, ws)
    assert all("SECRET-TOKEN" not in unit.text for unit in found.units)
    assert found.warnings


def test_discovery_survives_a_process_with_few_descriptors(tmp_path: Path) -> None:
    """Run in a child limited to 64 open files: a wide tree is walked without EMFILE
    (discovery holds at most a few descriptors at once)."""
    ws = tmp_path / "ws"
    for n in range(300):
        (ws / f"d{n}").mkdir(parents=True)
        (ws / f"d{n}" / "AGENTS.md").write_text(f"{n}\n")
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "from harness.instruction_files import discover\n"
        "found = discover(sys.argv[1])\n"
        "print(len(found.sources), len(found.warnings))\n"
    )
    output = run_python_in_child(script, str(ws))
    assert output.split() == ["300", "0"]


def test_settings_refuse_path_syntax_in_names() -> None:
    """Instruction-file and vendored names are bare names: no path can be smuggled in."""
    for bad in ("../AGENTS.md", "/etc/passwd", "a/AGENTS.md", "..", "", "x\x00"):
        with pytest.raises(ValueError):
            InstructionFilesSettings(names=(bad,))
