"""Scoped loads (CONTRACT section 8): the chain from the root to each target, through real
files and symlinks, checked against the full walk as the reference."""

from __future__ import annotations

import functools
import os
import posixpath
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from harness import HarnessError, TargetOutsideWorkspace
from harness.instruction_files import InstructionFiles, InstructionFilesSettings, discover
from harness.runtime import Supervisor
from tests.instruction_files.conftest import DbMaker, Writer

MONOREPO = (
    "AGENTS.md",
    "packages/AGENTS.md",
    "packages/parser/AGENTS.md",
    "packages/parser/src/AGENTS.md",
    "packages/parser/test/AGENTS.md",
    "packages/parser2/AGENTS.md",
    "packages/other/AGENTS.md",
    "packages/other/deep/AGENTS.md",
    "fixtures/case/AGENTS.md",
)


@pytest.fixture
def mono(ws: Path, write: Writer) -> Path:
    for rel in MONOREPO:
        write(rel, f"rules of {rel}\n")
    write("README.md", "readme\n")
    return ws


def paths(found: object) -> list[str]:
    return [source.path for source in found]  # type: ignore[attr-defined]


PARSER_SRC = [
    "AGENTS.md",
    "packages/AGENTS.md",
    "packages/parser/AGENTS.md",
    "packages/parser/src/AGENTS.md",
]


def test_the_chain_of_a_deep_file_and_nothing_from_siblings(mono: Path) -> None:
    found = discover(mono, targets=["packages/parser/src/tokenize.ts"])
    assert paths(found) == PARSER_SRC
    assert found.targets == ("packages/parser/src/tokenize.ts",)
    assert found.chain == (".", "packages", "packages/parser", "packages/parser/src")
    assert found.warnings == ()


def test_the_root_as_target(mono: Path) -> None:
    for target in (".", "./", "packages/.."):
        found = discover(mono, targets=[target])
        assert paths(found) == ["AGENTS.md"]
        assert found.targets == (".",) and found.chain == (".",)


def test_a_file_at_the_root(mono: Path) -> None:
    found = discover(mono, targets=["README.md"])
    assert paths(found) == ["AGENTS.md"] and found.targets == ("README.md",)


def test_a_trailing_slash_names_the_directory(mono: Path) -> None:
    found = discover(mono, targets=["packages/parser/"])
    assert paths(found) == PARSER_SRC[:3]
    assert found.targets == ("packages/parser",)


def test_a_directory_targets_chain_ends_at_itself(mono: Path) -> None:
    assert paths(discover(mono, targets=["packages/parser/src"])) == PARSER_SRC


def test_an_absolute_path_inside_the_workspace(mono: Path, tmp_path: Path) -> None:
    target = mono / "packages" / "parser" / "src" / "tokenize.ts"
    found = discover(mono, targets=[target, str(mono)])
    assert paths(found) == PARSER_SRC
    assert found.targets == ("packages/parser/src/tokenize.ts", ".")
    # An absolute target written through the symlink the workspace was given by.
    link = tmp_path / "ws-link"
    link.symlink_to(mono)
    found = discover(link, targets=[link / "packages" / "parser" / "x.ts"])
    assert paths(found) == PARSER_SRC[:3]


def test_a_target_through_a_symlinked_directory_gets_the_real_chain(
    mono: Path, write: Writer
) -> None:
    (mono / "shortcut").symlink_to("packages/parser")
    (mono / "abs").symlink_to(mono / "packages" / "other")
    write("links/AGENTS.md", "links\n")
    (mono / "links" / "up").symlink_to("../packages/parser/src")
    assert paths(discover(mono, targets=["shortcut/src/x.ts"])) == PARSER_SRC
    assert paths(discover(mono, targets=["abs/deep/x"])) == [
        "AGENTS.md",
        "packages/AGENTS.md",
        "packages/other/AGENTS.md",
        "packages/other/deep/AGENTS.md",
    ]
    # links/ holds the symlink but is not on the real chain: its AGENTS.md does not apply.
    found = discover(mono, targets=["links/up/new.ts"])
    assert paths(found) == PARSER_SRC and found.targets == ("links/up/new.ts",)
    # ".." after a symlink climbs from where it really lies, as the OS does.
    assert paths(discover(mono, targets=["shortcut/../other"])) == [
        "AGENTS.md",
        "packages/AGENTS.md",
        "packages/other/AGENTS.md",
    ]


def test_a_file_symlink_target_inside_gets_the_chain_of_its_real_file(mono: Path) -> None:
    (mono / "entry.ts").symlink_to("packages/parser/src/main.ts")  # dangling: to be created
    assert paths(discover(mono, targets=["entry.ts"])) == PARSER_SRC


def test_under_git_contributes_nothing(mono: Path, write: Writer) -> None:
    write(".git/AGENTS.md", "never\n")
    write(".git/hooks/AGENTS.md", "never\n")
    for target in (".git/hooks/pre-commit", ".git", "packages/.git/x"):
        assert paths(discover(mono, targets=[target]))[:1] == ["AGENTS.md"]
        assert not any(".git" in path for path in paths(discover(mono, targets=[target])))
    (mono / "gitlink").symlink_to(".git/hooks")
    assert paths(discover(mono, targets=["gitlink/x"])) == ["AGENTS.md"]


def test_under_node_modules_contributes_nothing(mono: Path, write: Writer) -> None:
    write("node_modules/lib/AGENTS.md", "vendored\n")
    write("packages/parser/node_modules/dep/AGENTS.md", "vendored\n")
    assert paths(discover(mono, targets=["node_modules/lib/index.js"])) == ["AGENTS.md"]
    found = discover(mono, targets=["packages/parser/node_modules/dep/index.js"])
    assert paths(found) == PARSER_SRC[:3]


def test_in_a_gitignored_directory_contributes_nothing(mono: Path, write: Writer) -> None:
    write(".gitignore", "build/\n")
    write("packages/.gitignore", "generated\n")
    write("build/AGENTS.md", "ignored\n")
    write("build/gen/AGENTS.md", "ignored\n")
    write("packages/parser/generated/AGENTS.md", "ignored by packages/.gitignore\n")
    write("packages/parser/generated/deep/AGENTS.md", "below an ignored directory\n")
    assert paths(discover(mono, targets=["build/gen/out.js"])) == ["AGENTS.md"]
    found = discover(mono, targets=["packages/parser/generated/deep/x.ts"])
    assert paths(found) == PARSER_SRC[:3]
    assert found.warnings == discover(mono, targets=["packages/parser/x"]).warnings


def test_an_ignored_instruction_file_on_the_chain_is_skipped_as_in_the_walk(
    mono: Path, write: Writer
) -> None:
    write("packages/parser/.gitignore", "AGENTS.md\n")
    found = discover(mono, targets=["packages/parser/src/x.ts"])
    assert paths(found) == ["AGENTS.md", "packages/AGENTS.md"]  # (it matches below too)
    warning = "packages/parser/AGENTS.md: skipped: ignored by packages/parser/.gitignore:1"
    assert warning in found.warnings
    assert found.warnings == discover(mono).warnings[:2]


def test_a_chain_with_an_override_and_an_agents_md_in_one_directory(
    mono: Path, write: Writer
) -> None:
    write("packages/parser/AGENTS.override.md", "override\n")
    found = discover(mono, targets=["packages/parser/src/x.ts"])
    assert paths(found) == [
        "AGENTS.md",
        "packages/AGENTS.md",
        "packages/parser/AGENTS.override.md",
        "packages/parser/src/AGENTS.md",
    ]
    assert [s.content for s in found][2] == "override\n"


def test_several_targets_sharing_a_prefix(mono: Path) -> None:
    found = discover(
        mono,
        targets=[
            "packages/parser2/x.ts",
            "packages/parser/test/t.ts",
            "packages/parser/src/a.ts",
            "packages/parser/src/a.ts",  # once
        ],
    )
    assert paths(found) == [
        "AGENTS.md",
        "packages/AGENTS.md",
        "packages/parser/AGENTS.md",
        "packages/parser2/AGENTS.md",
        "packages/parser/src/AGENTS.md",
        "packages/parser/test/AGENTS.md",
    ]
    assert found.targets == (
        "packages/parser2/x.ts",
        "packages/parser/test/t.ts",
        "packages/parser/src/a.ts",
    )
    assert found.chain == (
        ".",
        "packages",
        "packages/parser",
        "packages/parser2",
        "packages/parser/src",
        "packages/parser/test",
    )


def test_a_target_that_does_not_exist_uses_its_deepest_existing_ancestor(mono: Path) -> None:
    found = discover(mono, targets=["packages/parser/src/new/deeper/file.ts"])
    assert paths(found) == PARSER_SRC
    assert found.chain[-1] == "packages/parser/src"
    assert paths(discover(mono, targets=["README.md/below"])) == ["AGENTS.md"]
    assert paths(discover(mono, targets=["nope/../packages/parser/x"])) == PARSER_SRC[:3]


def test_a_symlink_loop_ends_the_chain_with_a_warning(mono: Path) -> None:
    (mono / "packages" / "loop").symlink_to("loop")
    found = discover(mono, targets=["packages/loop/x.ts"])
    assert paths(found) == ["AGENTS.md", "packages/AGENTS.md"]
    assert found.warnings == (
        "packages/loop/x.ts: target's chain ends above packages/loop, which cannot be "
        "examined (Too many levels of symbolic links)",
    )


@pytest.mark.parametrize(
    "target", ["..", "../outside/x", "packages/../../outside", "nope/../../x", "/etc/passwd"]
)
def test_dot_dot_or_an_absolute_path_outside_is_refused(mono: Path, target: str) -> None:
    with pytest.raises(TargetOutsideWorkspace, match="outside the workspace") as caught:
        discover(mono, targets=["packages", target])
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, HarnessError)
    assert caught.value.target == target and repr(target)[1:-1] in str(caught.value)


@contextmanager
def opened_paths() -> Iterator[list[str]]:
    """Every path this thread passes to ``open``/``os.open``/``scandir`` meanwhile (an audit
    hook: hooks cannot be removed, so it records only while the context is active)."""
    seen: list[str] = []
    active = threading.local()
    active.on = True

    def hook(event: str, args: tuple[object, ...]) -> None:
        if getattr(active, "on", False) and event in ("open", "os.scandir", "os.readlink"):
            seen.append(str(args[0]))

    sys.addaudithook(hook)
    try:
        yield seen
    finally:
        active.on = False


def test_a_symlinked_directory_pointing_outside_is_refused_and_not_read(
    mono: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside" / "AGENTS.md").write_text("outside\n")
    (mono / "escape").symlink_to(tmp_path / "outside")
    (mono / "packages" / "up").symlink_to("../..")
    for target in ("escape/x.ts", "escape", "packages/up/outside/x"):
        with (
            opened_paths() as seen,
            pytest.raises(TargetOutsideWorkspace, match=r"symlink|'\.\.'"),
        ):
            discover(mono, targets=[target])
        assert not any("outside" in path for path in seen)


def test_a_file_symlink_pointing_outside_is_refused(mono: Path, tmp_path: Path) -> None:
    (tmp_path / "outside" / "secret.md").write_text("secret\n")
    (mono / "notes.md").symlink_to(tmp_path / "outside" / "secret.md")
    (mono / "gone.md").symlink_to("../outside/not-there.md")  # dangling, still outside
    for target in ("notes.md", "gone.md"):
        with pytest.raises(TargetOutsideWorkspace, match=target):
            discover(mono, targets=[target])


def test_off_chain_directories_are_never_listed_or_read(mono: Path, tmp_path: Path) -> None:
    (mono / "packages" / "other" / "AGENTS.md").unlink()
    (mono / "packages" / "other" / "AGENTS.md").symlink_to(tmp_path / "outside" / "x.md")
    (mono / "packages" / "other" / "deep" / "AGENTS.md").write_bytes(b"x" * 2000)
    settings = InstructionFilesSettings(max_bytes=1000)
    full = discover(mono, settings)
    assert any(w.startswith("packages/other/AGENTS.md: skipped") for w in full.warnings)
    assert any(w.startswith("packages/other/deep/AGENTS.md: skipped") for w in full.warnings)
    with opened_paths() as seen:
        scoped = discover(mono, settings, targets=["packages/parser/src/x.ts"])
    assert paths(scoped) == PARSER_SRC and scoped.warnings == ()
    names = {posixpath.basename(path) for path in seen}
    for off_chain in ("other", "deep", "fixtures", "case", "parser2", "test"):
        assert off_chain not in names, f"{off_chain} was opened by a scoped load"
    scans = [path for path in seen if path.isdigit()]  # scandir(fd): one per chain directory
    assert len(scans) == len(scoped.chain) == 4


def _tree_for_differential(ws: Path, write: Writer) -> list[str]:
    for rel in MONOREPO:
        write(rel, f"{rel}\n")
    write(".gitignore", "fixtures/\n")
    write("packages/other/AGENTS.override.md", "override\n")
    write("packages/parser/node_modules/x/AGENTS.md", "vendored\n")
    write("packages/parser/test/.gitignore", "AGENTS.md\n")
    (ws / "packages" / "parser" / "src" / "CLAUDE.md").symlink_to("../AGENTS.md")
    return sorted(
        os.path.relpath(os.path.join(top, name), ws)
        for top, dirs, _ in os.walk(ws)
        for name in dirs
    )


@pytest.mark.parametrize("git", [False, True])
def test_each_directorys_chain_is_the_full_walk_restricted_to_it(
    ws: Path, write: Writer, git: bool
) -> None:
    """Differential: the full walk is the reference; a scoped load of any directory returns
    exactly the full walk's sources that lie on its chain, in the same order (also in a git
    repository whose index tracks a file inside an ignored directory)."""
    directories = _tree_for_differential(ws, write)
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        run = functools.partial(subprocess.run, cwd=ws, check=True, capture_output=True)
        run(["git", "init", "-q"])
        run(["git", "add", "-f", "fixtures/case/AGENTS.md"])
    settings = InstructionFilesSettings(names=("AGENTS.override.md", "AGENTS.md", "CLAUDE.md"))
    full = discover(ws, settings)
    for directory in [".", *directories]:
        scoped = discover(ws, settings, targets=[directory])
        on_chain = set(scoped.chain)
        expected = [
            source.path for source in full if (posixpath.dirname(source.path) or ".") in on_chain
        ]
        assert paths(scoped) == expected, directory
        assert set(scoped.warnings) <= set(full.warnings), directory
    assert ("fixtures/case/AGENTS.md" in paths(full)) is git  # tracked: not ignored


# -- the cache -------------------------------------------------------------------------------


async def test_scoped_loads_are_cached_per_chain_and_invalidated_by_path(mono: Path) -> None:
    files = InstructionFiles()
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            first = await files.load(mono, agent="a", targets=["packages/parser/src/x.ts"])
            again = await files.load(mono, agent="a", targets=["packages/parser/src/y.ts"])
            assert again.sources is first.sources  # one chain, one entry (a hit)
            assert again.targets == ("packages/parser/src/y.ts",)
            other = await files.load(mono, agent="a", targets=["packages/other/x.ts"])
            assert other.sources is not first.sources
            full = await files.load(mono, agent="a")
            assert len(full) == len(MONOREPO) and full.targets == ()
            edited = mono / "packages" / "parser" / "AGENTS.md"
            edited.write_text("edited\n")
            hit = await files.load(mono, agent="a", targets=["packages/parser/src/x.ts"])
            assert "edited\n" not in [s.content for s in hit]  # not invalidated: a hit
            files.invalidate(edited)
            fresh = await files.load(mono, agent="a", targets=["packages/parser/src/x.ts"])
            assert [s.content for s in fresh][2] == "edited\n"


async def test_a_scoped_load_sees_a_retargeted_symlink_at_once(mono: Path) -> None:
    files = InstructionFiles()
    link = mono / "current"
    link.symlink_to("packages/parser")
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            first = await files.load(mono, agent="a", targets=["current/x.ts"])
            assert paths(first) == PARSER_SRC[:3]
            link.unlink()
            link.symlink_to("packages/other")  # the chain is resolved on every load
            second = await files.load(mono, agent="a", targets=["current/x.ts"])
            assert paths(second)[-1] == "packages/other/AGENTS.md"


async def test_load_refuses_a_target_outside_and_takes_one_path(mono: Path) -> None:
    files = InstructionFiles()
    with anyio.fail_after(10):
        with pytest.raises(TargetOutsideWorkspace):
            await files.load(mono, agent="a", targets=["../x"])
        one = await files.load(mono, agent="a", targets="packages/parser")  # type: ignore[arg-type]
        assert one.targets == ("packages/parser",)


async def test_the_database_row_comes_last_in_a_scoped_load(mono: Path, make_db: DbMaker) -> None:
    database = make_db([("acme", "a", "row rules")])
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            found = await files.load(
                mono, agent="a", project_id="acme", targets=["packages/other/x", "README.md"]
            )
    await files.aclose()
    assert paths(found) == [
        "AGENTS.md",
        "packages/AGENTS.md",
        "packages/other/AGENTS.md",
        "db:acme/a",
    ]
    assert found.targets == ("packages/other/x", "README.md")
