"""The .AGENTS/ loader: order, the empty layer, and the same safety rules as instruction files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness import Harness
from harness.project_context import load_project_context

Tree = Callable[[dict[str, str | bytes]], Path]


def ids(workspace: Path, **kwargs: int) -> list[str]:
    return [unit.id for unit in load_project_context(workspace, **kwargs).units]


def test_priority_files_first_then_the_rest_alphabetically(tree: Tree) -> None:
    workspace = tree(
        {
            ".AGENTS/zeta.md": "z",
            ".AGENTS/glossary.md": "g",
            ".AGENTS/a-first.md": "a",
            ".AGENTS/conventions.md": "c",
            ".AGENTS/overview.md": "o",
            ".AGENTS/b.md": "b",
            ".AGENTS/notes.txt": "not markdown",
            ".AGENTS/.draft.md": "hidden",
            ".AGENTS/sub/inner.md": "nested",
        }
    )
    assert ids(workspace) == [
        ".AGENTS/overview.md",
        ".AGENTS/conventions.md",
        ".AGENTS/glossary.md",
        ".AGENTS/a-first.md",
        ".AGENTS/b.md",
        ".AGENTS/zeta.md",
    ]


def test_each_unit_has_its_workspace_relative_path_as_source(tree: Tree) -> None:
    workspace = tree({".AGENTS/overview.md": "\ufeff# Overview\n\nthe map\n\n"})
    [unit] = load_project_context(workspace).units
    assert unit.source == ".AGENTS/overview.md"
    assert unit.text == "# Overview\n\nthe map"  # BOM and trailing blank lines removed


def test_missing_directory_is_an_empty_layer(tree: Tree) -> None:
    workspace = tree({"README.md": "no .AGENTS here"})
    context = load_project_context(workspace)
    assert context.units == ()
    assert context.warnings == ()


def test_symlink_escaping_the_workspace_is_not_read(tree: Tree, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET", encoding="utf-8")
    workspace = tree({".AGENTS/overview.md": "ok"})
    os.symlink(secret, workspace / ".AGENTS" / "leak.md")
    context = load_project_context(workspace)
    assert [unit.id for unit in context.units] == [".AGENTS/overview.md"]
    assert all("TOP SECRET" not in unit.text for unit in context.units)
    assert any(w.startswith(".AGENTS/leak.md:") and "outside" in w for w in context.warnings)


def test_symlinked_agents_directory_is_not_followed(tree: Tree, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "overview.md").write_text("from elsewhere", encoding="utf-8")
    workspace = tree({"README.md": "x"})
    os.symlink(elsewhere, workspace / ".AGENTS")
    context = load_project_context(workspace)
    assert context.units == ()
    assert any("symlink" in warning for warning in context.warnings)


def test_in_workspace_symlink_to_the_same_file_is_loaded_once(tree: Tree) -> None:
    workspace = tree({".AGENTS/overview.md": "one file"})
    os.symlink("overview.md", workspace / ".AGENTS" / "alias.md")
    context = load_project_context(workspace)
    assert [unit.id for unit in context.units] == [".AGENTS/overview.md"]
    assert any("loaded once" in warning for warning in context.warnings)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_skipped_without_hanging(tree: Tree) -> None:
    workspace = tree({".AGENTS/overview.md": "ok"})
    os.mkfifo(workspace / ".AGENTS" / "pipe.md")
    context = load_project_context(workspace)
    assert [unit.id for unit in context.units] == [".AGENTS/overview.md"]
    assert any("pipe.md" in w and "regular" in w for w in context.warnings)


def test_oversized_file_is_skipped_with_a_warning(tree: Tree) -> None:
    workspace = tree({".AGENTS/overview.md": "small", ".AGENTS/huge.md": "x" * 2000})
    context = load_project_context(workspace, max_file_bytes=1000)
    assert [unit.id for unit in context.units] == [".AGENTS/overview.md"]
    assert any("huge.md" in w and "cap" in w for w in context.warnings)


def test_invalid_utf8_is_replaced_with_a_warning(tree: Tree) -> None:
    workspace = tree({".AGENTS/glossary.md": b"caf\xe9 terms"})
    context = load_project_context(workspace)
    [unit] = context.units
    assert unit.text == "caf\ufffd terms"
    assert any("glossary.md" in w and "U+FFFD" in w for w in context.warnings)


def test_whitespace_only_file_is_skipped(tree: Tree) -> None:
    workspace = tree({".AGENTS/overview.md": "  \n\t\n", ".AGENTS/glossary.md": "g"})
    context = load_project_context(workspace)
    assert [unit.id for unit in context.units] == [".AGENTS/glossary.md"]
    assert any("overview.md" in w for w in context.warnings)


async def test_build_prompt_fills_project_context_in_order(tree: Tree) -> None:
    workspace = tree(
        {
            ".AGENTS/security.md": "S",
            ".AGENTS/glossary.md": "G",
            ".AGENTS/overview.md": "O",
            ".AGENTS/conventions.md": "C",
        }
    )
    with anyio.fail_after(10):
        async with Harness() as harness:
            prompt = await harness.build_prompt(workspace, agent="reviewer")
    layer = prompt.layers[2]
    assert layer.name == "project_context"
    assert layer.kept == (
        ".AGENTS/overview.md",
        ".AGENTS/conventions.md",
        ".AGENTS/glossary.md",
        ".AGENTS/security.md",
    )
    positions = [layer.text.index(f'path=".AGENTS/{n}.md"') for n in ("overview", "security")]
    assert positions == sorted(positions)


async def test_build_prompt_without_agents_directory_has_empty_layer(tree: Tree) -> None:
    workspace = tree({"AGENTS.md": "root rules"})
    with anyio.fail_after(10):
        async with Harness() as harness:
            prompt = await harness.build_prompt(workspace, agent="reviewer")
    layer = prompt.layers[2]
    assert (layer.name, layer.text, layer.kept, layer.tokens) == ("project_context", "", (), 0)
