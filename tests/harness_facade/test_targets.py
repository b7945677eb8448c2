"""Targets through the whole harness: ``build``/``build_prompt``, the debug print's header,
and ``--target`` on ``harness debug`` / ``harness sources`` (workspace-relative, never
relative to the current directory; outside the workspace: exit 2, one line)."""

from __future__ import annotations

import hashlib
import io
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness import Harness, TargetOutsideWorkspace, debug
from harness.debug import scope_line
from tests.cli import ROOT
from tests.cli import harness_cli as run_cli

Tree = Callable[[dict[str, str | bytes]], Path]

FILES: dict[str, str | bytes] = {
    "AGENTS.md": "Root rules.\n@docs/style.md\n",
    "docs/style.md": "Use ruff.\n",
    "packages/AGENTS.md": "Packages rules.\n",
    "packages/parser/AGENTS.md": "Parser rules.\n",
    "packages/parser/src/AGENTS.md": "Parser source rules.\n",
    "packages/payments/AGENTS.md": "Payments rules: never log card numbers.\n",
    ".AGENTS/overview.md": "Overview.\n@../docs/style.md\n",
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def test_build_and_build_prompt_take_targets(tree: Tree) -> None:
    ws = tree(FILES)
    with anyio.fail_after(20):
        async with Harness() as h:
            build = await h.build(ws, agent="reviewer", targets=["packages/parser/src/lex.ts"])
            prompt = await h.build_prompt(ws, agent="reviewer", targets=["packages/parser/src"])
            whole = await h.build_prompt(ws, agent="reviewer")
            with pytest.raises(TargetOutsideWorkspace):
                await h.build(ws, agent="reviewer", targets=["../elsewhere"])
    assert build.targets == ("packages/parser/src/lex.ts",)
    assert build.chain == (".", "packages", "packages/parser", "packages/parser/src")
    (layer,) = [layer for layer in build.prompt.layers if layer.name == "instruction_files"]
    assert list(layer.kept) == [
        "AGENTS.md",
        "packages/AGENTS.md",
        "packages/parser/AGENTS.md",
        "packages/parser/src/AGENTS.md",
    ]
    assert "Payments rules" not in build.prompt.text and "Payments rules" in whole.text
    assert "Use ruff." in build.prompt.text
    assert build.imports == {
        "AGENTS.md": (("docs/style.md", sha("Use ruff.\n")),),
        ".AGENTS/overview.md": (("docs/style.md", sha("Use ruff.\n")),),
    }
    assert build.context()["targets"] == ["packages/parser/src/lex.ts"]
    assert build.context()["imports"]["AGENTS.md"] == [["docs/style.md", sha("Use ruff.\n")]]
    assert prompt.text == build.prompt.text


def test_scope_line_plurals() -> None:
    assert scope_line(("a",), (".", "a", "b", "c")) == (
        "scoped to 1 target: 4 directories on its chain"
    )
    assert scope_line(("a", "b"), (".",)) == "scoped to 2 targets: 1 directory on their chains"


def test_the_debug_print_header_says_what_the_build_was_scoped_to(tree: Tree) -> None:
    ws = tree(FILES)
    out = io.StringIO()
    debug.print(ws, agent="reviewer", targets=["packages/parser/src/lex.ts"], file=out)
    head = out.getvalue().splitlines()[:4]
    assert head[2] == "scope      scoped to 1 target: 4 directories on its chain"
    assert head[3] == "targets    packages/parser/src/lex.ts"
    plain = io.StringIO()
    debug.print(ws, agent="reviewer", file=plain)
    assert "scope" not in plain.getvalue().splitlines()[2]


def harness_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """From any directory: the package comes from PYTHONPATH, not the current directory."""
    return run_cli(*args, cwd=cwd, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_cli_targets_are_workspace_relative_not_cwd_relative(tree: Tree) -> None:
    ws = tree(FILES)
    elsewhere = ws / "packages" / "payments"  # the cwd must not matter
    done = harness_cli(
        "sources", str(ws), "--target", "packages/parser/src/lex.ts", "--target", "docs/",
        cwd=elsewhere,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == (
        "scoped to 2 targets: 5 directories on their chains: packages/parser/src/lex.ts, docs"
    )
    assert "payments" not in done.stdout
    debugged = harness_cli(
        "debug", str(ws), "--agent", "reviewer", "--target", str(ws / "packages"), cwd=elsewhere
    )
    assert debugged.returncode == 0, debugged.stderr
    assert "scope      scoped to 1 target: 2 directories on its chain" in debugged.stdout
    assert "Payments rules" not in debugged.stdout


@pytest.mark.parametrize("command", ["debug", "sources"])
@pytest.mark.parametrize("target", ["../outside", "escape/x", "/etc/passwd"])
def test_cli_a_target_outside_exits_2_with_one_line(
    tree: Tree, tmp_path: Path, command: str, target: str
) -> None:
    ws = tree(FILES)
    (ws / "escape").symlink_to(tmp_path)
    done = harness_cli(command, str(ws), "--agent", "reviewer", "--target", target)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "outside the workspace" in done.stderr
    assert done.stderr.startswith("harness: error: target ")


def test_a_hostile_target_name_is_escaped_in_the_header(tree: Tree) -> None:
    ws = tree(FILES)
    out = io.StringIO()
    debug.print(ws, agent="reviewer", targets=["packages/\x1b[31mred\nfake.ts"], file=out)
    head = out.getvalue().splitlines()[:5]
    assert head[3] == "targets    packages/\\x1b[31mred\\x0afake.ts"
    assert head[4].startswith("tokenizer  ")  # no forged line
    assert "\x1b" not in out.getvalue()


async def test_a_recorded_build_records_its_targets_and_imports(tree: Tree, tmp_path: Path) -> None:
    ws = tree(FILES)
    with anyio.fail_after(30):
        async with Harness(manifests=tmp_path / "manifests.db") as h:
            prompt = await h.build_prompt(ws, agent="reviewer", targets=["packages/parser/"])
            whole = await h.build_prompt(ws, agent="reviewer")
            assert h.manifests is not None and prompt.manifest_id and whole.manifest_id
            manifest = await h.manifests.get(prompt.manifest_id)
            plain = await h.manifests.get(whole.manifest_id)
            replay = await h.manifests.replay(prompt.manifest_id)
    assert manifest["targets"] == ["packages/parser"] and plain["targets"] == []
    style = [["docs/style.md", sha("Use ruff.\n")]]
    assert manifest["imports"] == {"AGENTS.md": style, ".AGENTS/overview.md": style}
    assert replay.identical, replay.differences
