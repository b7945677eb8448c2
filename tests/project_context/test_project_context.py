"""The .AGENTS/ loader: order, the empty layer, and the same safety rules as instruction files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness import Harness
from harness._project_context import load_project_context

Tree = Callable[[dict[str, str | bytes]], Path]


def ids(workspace: Path) -> list[str]:
    return [unit.id for unit in load_project_context(workspace).units]


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


SECRET = "SECRET-TOKEN"


@pytest.mark.parametrize(
    ("target", "gitignore", "reason"),
    [
        (".git/config", "", ".git/"),
        ("node_modules/pkg/notes.md", "", "node_modules/"),
        (".env", ".env\n", ".gitignore"),
        ("secrets/key.md", "secrets/\n", ".gitignore"),
        ("deep/er/key.md", "", ".gitignore"),  # deep/.gitignore says "er/"
    ],
)
def test_symlink_into_git_vendored_or_gitignored_path_is_not_read(
    tree: Tree, target: str, gitignore: str, reason: str
) -> None:
    """A committed `.AGENTS/overview.md -> ../.git/config` (or a vendored or gitignored
    file) must not put secrets into the prompt: skipped with a warning naming why."""
    workspace = tree(
        {
            target: f"url = https://user:{SECRET}@example.com/r\n",
            ".gitignore": gitignore,
            "deep/.gitignore": "er/\n",
            ".AGENTS/conventions.md": "conventions\n",
        }
    )
    os.symlink(f"../{target}", workspace / ".AGENTS" / "overview.md")
    context = load_project_context(workspace)
    assert [unit.id for unit in context.units] == [".AGENTS/conventions.md"]
    assert all(SECRET not in unit.text for unit in context.units)
    [warning] = context.warnings
    assert warning.startswith(".AGENTS/overview.md: ") and reason in warning


def test_symlink_to_a_tracked_file_inside_the_workspace_is_read(tree: Tree) -> None:
    """The rules refuse only what discovery refuses: a link to ordinary docs still works,
    and a `!` line re-including a file is honoured as in git."""
    workspace = tree(
        {
            "docs/overview.md": "the overview\n",
            "notes/keep.md": "kept\n",
            ".gitignore": "notes/*\n!notes/keep.md\n",
        }
    )
    (workspace / ".AGENTS").mkdir()
    os.symlink("../docs/overview.md", workspace / ".AGENTS" / "overview.md")
    os.symlink("../notes/keep.md", workspace / ".AGENTS" / "glossary.md")
    context = load_project_context(workspace)
    assert [(u.id, u.text) for u in context.units] == [
        (".AGENTS/overview.md", "the overview"),
        (".AGENTS/glossary.md", "kept"),
    ]
    assert context.warnings == ()


def test_vendored_names_come_from_the_caller(tree: Tree) -> None:
    """`vendored` replaces the default list (``.git`` is always refused)."""
    workspace = tree({"third_party/notes.md": "theirs\n", ".AGENTS/x.md": "x\n"})
    os.symlink("../third_party/notes.md", workspace / ".AGENTS" / "overview.md")
    assert ids(workspace) == [".AGENTS/overview.md", ".AGENTS/x.md"]
    refused = load_project_context(workspace, vendored=["third_party"])
    assert [unit.id for unit in refused.units] == [".AGENTS/x.md"]
    assert any("third_party/" in w for w in refused.warnings)


async def test_build_prompt_never_shows_git_config_through_agents_symlink(tree: Tree) -> None:
    workspace = tree(
        {".git/config": f"token = {SECRET}\n", "AGENTS.md": "root\n", ".AGENTS/g.md": "g\n"}
    )
    os.symlink("../.git/config", workspace / ".AGENTS" / "overview.md")
    with anyio.fail_after(10):
        async with Harness() as harness:
            build = await harness.build(workspace, agent="reviewer")
    assert SECRET not in build.prompt.text
    assert build.prompt.layers[2].kept == (".AGENTS/g.md",)
    assert any(w.startswith(".AGENTS/overview.md: ") for w in build.warnings)


def test_undecodable_and_escape_like_names_are_distinct_printable_units(tmp_path: Path) -> None:
    context = tmp_path / ".AGENTS"
    context.mkdir()
    root = os.fsencode(context)
    for name in (b"caf\xe9.md", b"caf\\xe9.md"):
        with open(root + b"/" + name, "wb") as handle:
            handle.write(b"notes\n")
    found = load_project_context(tmp_path)
    assert sorted(unit.id for unit in found.units) == [
        ".AGENTS/caf\\\\xe9.md",
        ".AGENTS/caf\\xe9.md",
    ]
    for unit in found.units:
        assert unit.source == unit.id
        unit.id.encode("utf-8")


def test_an_inode_number_reused_by_an_atomic_save_does_not_merge_two_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.instruction_files.discovery.formats._project_context as project_context
    from tests.filesystem import reuses_inodes_at_once

    if not reuses_inodes_at_once(tmp_path):
        pytest.skip("this filesystem does not reuse inode numbers at once (e.g. tmpfs)")
    context = tmp_path / ".AGENTS"
    context.mkdir()
    (context / "overview.md").write_text("overview v0\n")
    (context / "conventions.md").write_text("conventions v0\n")
    read = project_context.read_file
    saved: list[bool] = []

    def read_then_save(name: str | int, **options: Any) -> object:
        found = read(name, **options)
        if not saved:  # free the file just read, then give its number to the next new file
            saved.append(True)
            for name in ("overview.md", "conventions.md"):
                staging = context / f".{name}.tmp"
                staging.write_text(f"{name.removesuffix('.md')} v1\n")
                os.replace(staging, context / name)
        return found

    monkeypatch.setattr(project_context, "read_file", read_then_save)
    for _ in range(10):  # the reuse is likely, not certain: repeat the scenario
        saved.clear()
        found = load_project_context(tmp_path)
        assert [unit.id for unit in found.units] == [
            ".AGENTS/overview.md",
            ".AGENTS/conventions.md",
        ]
        assert found.warnings == ()
