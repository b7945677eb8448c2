"""Instruction formats: the ``agents`` and ``claude`` formats, the seam a new format plugs
into (one class, one registry entry), and the ``format``/``trigger``/``globs`` of a source.
Real files, real git, real SQLite."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessConfig, load_config
from harness.errors import ArgumentError
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionSet,
    discover,
)
from harness.instruction_files._models import InstructionSource
from harness.instruction_files.discovery import FORMATS, Directory, Found
from harness.instruction_files.discovery._format import file_sources
from harness.instruction_files.discovery._incremental import walk
from harness.runtime import Supervisor
from harness.workspace import resolve_workspace
from harness.workspace._import_door import ImportDoor
from tests.instruction_files.conftest import Writer
from tests.workspace.ignore_cases import git

BOTH = InstructionFilesSettings(formats=("agents", "claude"), walk_threads=1)
DbMaker = Callable[[Iterable[tuple[str, str, object]]], Path]


def _shown(found: InstructionSet) -> list[tuple[str, str]]:
    return [(source.path, source.format) for source in found]


def test_claude_files_are_read_after_agents_within_a_directory(write: Writer, ws: Path) -> None:
    write("AGENTS.md", "agents root\n")
    write("CLAUDE.md", "claude root\n")
    write("CLAUDE.local.md", "mine\n")
    write("pkg/CLAUDE.md", "claude pkg @../docs/x.md\n")
    write("pkg/AGENTS.override.md", "override pkg\n")
    write("pkg/AGENTS.md", "shadowed\n")
    found = discover(ws, BOTH)
    assert _shown(found) == [
        ("AGENTS.md", "agents"),
        ("CLAUDE.md", "claude"),
        ("CLAUDE.local.md", "claude"),
        ("pkg/AGENTS.override.md", "agents"),
        ("pkg/CLAUDE.md", "claude"),
    ]
    assert {(source.trigger, source.globs) for source in found} == {("always", ())}
    assert [source.kind for source in found][:3] == ["root"] * 3


def test_claude_files_are_not_read_unless_configured(write: Writer, ws: Path) -> None:
    write("CLAUDE.md", "claude root\n")
    assert discover(ws, InstructionFilesSettings()).sources == ()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_gitignored_local_file_is_read_but_not_inside_an_ignored_directory(
    write: Writer, ws: Path
) -> None:
    git(ws, "init", "-q")
    write(".gitignore", "CLAUDE.local.md\nCLAUDE.md\nbuild/\n")
    write("CLAUDE.local.md", "local, ignored\n")
    write("CLAUDE.md", "shared, ignored\n")
    write("build/CLAUDE.local.md", "inside an ignored directory\n")
    found = discover(ws, BOTH)
    assert _shown(found) == [("CLAUDE.local.md", "claude")]
    assert found.warnings == ("CLAUDE.md: skipped: ignored by .gitignore:2",)
    assert found.local == ("CLAUDE.local.md",)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_local_files_on_every_path_of_the_walk(write: Writer, ws: Path) -> None:
    """Ignored ``AGENTS.override.md`` and ``CLAUDE.local.md`` are read by the full walk, a
    scoped walk, a reload and after ``invalidate(path)``; never inside an ignored or vendored
    directory. (Before, an ignored override was skipped.)"""
    git(ws, "init", "-q")
    write(".gitignore", "**/AGENTS.override.md\nCLAUDE.local.md\ngen/\n")
    write("pkg/AGENTS.md", "shared\n")
    write("pkg/AGENTS.override.md", "mine\n")
    write("gen/AGENTS.override.md", "ignored directory\n")
    write("node_modules/AGENTS.override.md", "vendored\n")
    expected = [("pkg/AGENTS.override.md", "agents")]
    assert _shown(discover(ws, BOTH)) == expected
    scoped = discover(ws, BOTH, targets=["pkg/x.py", "gen/x.py", "node_modules/x.js"])
    assert _shown(scoped) == expected and scoped.local == ("pkg/AGENTS.override.md",)
    root = resolve_workspace(ws)
    _, snapshot = walk(root, BOTH)
    write("pkg/CLAUDE.local.md", "my notes\n")
    found, _ = walk(root, BOTH, base=(snapshot, frozenset({"pkg/CLAUDE.local.md"})))
    assert found == discover(ws, BOTH)
    assert found.local == ("pkg/AGENTS.override.md", "pkg/CLAUDE.local.md")

    async def run() -> InstructionSet:
        files = InstructionFiles(BOTH)
        with anyio.fail_after(20):
            async with Supervisor([files.child_spec()]):
                await files.load(root, agent="a")
                write("AGENTS.override.md", "root override\n")
                files.invalidate(ws / "AGENTS.override.md")
                return await files.load(root, agent="a")

    loaded = anyio.run(run)
    assert loaded.sources[0].path == "AGENTS.override.md"
    assert "AGENTS.override.md" in loaded.local


def test_every_rule_of_the_walk_holds_for_claude_files(write: Writer, ws: Path) -> None:
    write("CLAUDE.md", "x" * 100)
    (ws / "pkg").mkdir()
    (ws / "pkg" / "CLAUDE.md").symlink_to(ws.parent / "outside" / "secret")
    (ws.parent / "outside" / "secret").write_text("secret\n")
    (ws / "node_modules" / "dep").mkdir(parents=True)
    write("node_modules/dep/CLAUDE.md", "vendored\n")
    found = discover(ws, BOTH.model_copy(update={"max_bytes": 10}))
    assert found.sources == ()
    assert [warning.split(":")[0] for warning in found.warnings] == ["CLAUDE.md", "pkg/CLAUDE.md"]


def test_a_reload_after_a_claude_edit_equals_a_cold_load(write: Writer, ws: Path) -> None:
    write("a/CLAUDE.md", "one\n")
    root = resolve_workspace(ws)
    _, snapshot = walk(root, BOTH)
    write("a/CLAUDE.local.md", "two\n")
    found, after = walk(root, BOTH, base=(snapshot, frozenset({"a/CLAUDE.local.md"})))
    assert found == discover(ws, BOTH) and after.walked == 1
    assert _shown(found) == [("a/CLAUDE.md", "claude"), ("a/CLAUDE.local.md", "claude")]


class _Gemini:
    """A third format in a dozen lines: the seam takes one class and one registry entry."""

    name = "gemini"

    def candidates(self) -> frozenset[str]:
        return frozenset({"GEMINI.md"})

    def visit(self, directory: Directory) -> None:
        directory.take("GEMINI.md")

    def sources(self, found: Found, door: ImportDoor) -> tuple[list[InstructionSource], list[str]]:
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})


def test_a_new_format_is_one_class_and_one_registry_entry(
    write: Writer, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORMATS, "gemini", lambda settings: _Gemini())  # type: ignore[index]
    write("AGENTS.md", "a\n")
    write("pkg/GEMINI.md", "g\n")
    settings = InstructionFilesSettings(formats=("gemini", "agents"), walk_threads=1)
    assert _shown(discover(ws, settings)) == [("AGENTS.md", "agents"), ("pkg/GEMINI.md", "gemini")]


def test_an_unknown_format_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ArgumentError, match="'agents', 'claude'"):
        InstructionFiles(InstructionFilesSettings(formats=("cursorr",)))
    with pytest.raises(ValueError, match="unknown instruction format 'cursorr'"):
        HarnessConfig(formats=("cursorr",))


async def test_the_row_is_of_format_database(write: Writer, ws: Path, make_db: DbMaker) -> None:
    write("AGENTS.md", "root\n")
    database = make_db([("acme", "reviewer", "Review like acme.")])
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            found = await files.load(ws, agent="reviewer", project_id="acme")
        await files.aclose()
    assert [(s.kind, s.format) for s in found] == [("root", "agents"), ("database", "database")]


async def test_a_harness_reads_the_formats_of_its_configuration(
    write: Writer, ws: Path, tmp_path: Path
) -> None:
    write("CLAUDE.md", "Claude rules here.\n")
    toml = tmp_path / "harness.toml"
    toml.write_text('formats = ["agents", "claude"]\n')
    config = load_config(toml)
    assert config.formats == ("agents", "claude")
    with anyio.fail_after(10):
        async with Harness(config) as harness:
            prompt = await harness.build_prompt(ws, agent="reviewer")
        async with Harness() as plain:
            without = await plain.build_prompt(ws, agent="reviewer")
    files = prompt.layers[1]
    assert "Claude rules here." in files.text and files.kept == ("CLAUDE.md",)
    assert "Claude rules here." not in without.layers[1].text
