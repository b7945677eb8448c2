"""``.AGENTS/`` as a format on the instruction-format seam: registered with its layer, read
at the root, and a new format feeding a layer is one class plus one registry entry. Real
files, a real Harness."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessConfig
from harness._project_context import load_project_context
from harness.errors import ArgumentError
from harness.instruction_files import InstructionFilesSettings, discover
from harness.instruction_files.discovery import FORMATS, read_root
from harness.instruction_files.discovery._rules import RuleFormat
from harness.instruction_files.discovery.formats import formats_for, layer_formats, layers
from harness.instruction_files.discovery.formats._claude import ClaudeFormat
from harness.instruction_files.discovery.formats._project_context import (
    ProjectContextFormat,
)
from harness.workspace.deny import DenyRules

Tree = Callable[[dict[str, str | bytes]], Path]


class Notes(RuleFormat):
    """A whole new format: ``NOTES.md`` at the root, for the project_context layer."""

    name = "notes"
    layer = "project_context"
    files = ("NOTES.md",)


class Briefs(RuleFormat):
    """A format of a layer of its own: ``briefs/*.md`` at the root."""

    name = "briefs"
    layer = "briefs"
    rules = ("briefs",)


def test_agents_directory_is_a_registered_format_of_its_own_layer() -> None:
    assert layers()["project_context"] == "project_context"
    assert {name for name, layer in layers().items() if layer == "instruction_files"} == {
        "agents",
        "claude",
        "gemini",
        "copilot",
        "cursor",
        "windsurf",
        "cline",
    }
    [fmt] = layer_formats("project_context")
    assert isinstance(fmt, ProjectContextFormat) and fmt.candidates() == {".AGENTS"}
    assert "project_context" in FORMATS
    everything = InstructionFilesSettings(formats=tuple(layers())[:-1])
    assert all(fmt.layer == "instruction_files" for fmt in formats_for(everything))


def test_the_walk_does_not_read_a_format_of_another_layer(tree: Tree) -> None:
    workspace = tree({".AGENTS/overview.md": "context", "AGENTS.md": "rules"})
    settings = InstructionFilesSettings(formats=("agents", "claude"))
    assert [source.path for source in discover(workspace, settings)] == ["AGENTS.md"]


def test_a_format_of_another_layer_cannot_be_configured_as_instructions() -> None:
    with pytest.raises(ArgumentError, match="feeds the project_context layer"):
        formats_for(InstructionFilesSettings(formats=("agents", "project_context")))
    with pytest.raises(ValueError, match="leave it out of formats"):
        HarnessConfig(formats=("agents", "project_context"))


def test_a_new_format_feeding_the_project_context_layer_is_one_class_and_one_entry(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORMATS, "notes", lambda settings: Notes())  # type: ignore[index]
    workspace = tree(
        {".AGENTS/glossary.md": "terms", "NOTES.md": "\ufeffour notes\n", "sub/NOTES.md": "no"}
    )
    context = load_project_context(workspace)
    assert [(unit.id, unit.text) for unit in context.units] == [
        (".AGENTS/glossary.md", "terms"),
        ("NOTES.md", "our notes\n"),  # as its format reads it: a rule file whole
    ]
    assert context.warnings == ("NOTES.md: altered: leading UTF-8 byte order mark removed",)


def test_a_new_format_keeps_to_deny_read_and_the_symlink_policy(
    tree: Tree, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORMATS, "notes", lambda settings: Notes())  # type: ignore[index]
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET")
    workspace = tree({"README.md": "x"})
    os.symlink(secret, workspace / "NOTES.md")
    context = load_project_context(workspace)
    assert context.units == ()
    assert [w.partition(":")[0] for w in context.warnings] == ["NOTES.md"]
    assert "outside the workspace" in context.warnings[0]
    os.unlink(workspace / "NOTES.md")
    (workspace / "NOTES.md").write_text("private")
    denied = load_project_context(workspace, deny_read=["NOTES.md"])
    assert denied.units == ()
    assert denied.warnings == (
        "NOTES.md: not read: it matches the deny_read pattern 'NOTES.md' (setting deny_read)",
    )


def test_a_format_of_a_layer_of_its_own_is_read_at_the_root(tree: Tree) -> None:
    files = {"briefs/b.md": "second", "briefs/a.md": "first", "briefs/x.txt": "no"}
    workspace = tree({**files, "pkg/briefs/c.md": "no"})
    root = os.path.realpath(workspace)
    sources, warnings = read_root(root, (Briefs(),), cap=1024, deny=DenyRules(()))
    assert [(s.path, s.content, s.format) for s in sources] == [
        ("briefs/a.md", "first", "briefs"),
        ("briefs/b.md", "second", "briefs"),
    ]
    assert warnings == []


def test_a_file_reached_by_two_formats_of_a_layer_is_read_once(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORMATS, "notes", lambda settings: Notes())  # type: ignore[index]
    workspace = tree({".AGENTS/overview.md": "the map"})
    os.link(workspace / ".AGENTS" / "overview.md", workspace / "NOTES.md")
    context = load_project_context(workspace)
    assert [unit.id for unit in context.units] == [".AGENTS/overview.md"]
    assert context.warnings == ("NOTES.md: same file as .AGENTS/overview.md; loaded once",)


async def test_a_build_puts_a_new_format_into_its_layer(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORMATS, "notes", lambda settings: Notes())  # type: ignore[index]
    workspace = tree({"NOTES.md": "Release on Fridays.\n", "AGENTS.md": "Be terse.\n"})
    with anyio.fail_after(20):
        async with Harness() as harness:
            prompt = await harness.build_prompt(workspace, agent="reviewer")
    layer = prompt.layer("project_context")
    assert layer.kept == ("NOTES.md",) and "Release on Fridays." in layer.text
    assert "Release on Fridays." not in prompt.layer("instruction_files").text


def test_a_rule_format_ranks_its_files_in_the_order_it_reads_them() -> None:
    claude = ClaudeFormat()
    ranks = [
        claude.rank(rel)
        for rel in (
            "pkg/CLAUDE.md",
            "pkg/.claude/CLAUDE.md",
            "CLAUDE.local.md",
            ".claude/rules/x.md",
        )
    ]
    assert ranks == [0, 1, 2, 3]
    context = ProjectContextFormat()
    names = ("overview.md", "conventions.md", "glossary.md", "a.md")
    assert [context.rank(f".AGENTS/{name}") for name in names] == [0, 1, 2, 3]
