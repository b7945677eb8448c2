"""The project root and the command line's defaults, on real git repositories: a WORKSPACE
inside a project is promoted to the project's root and scoped to WORKSPACE (the report says
so), ``--no-project-root`` keeps it, ``--target`` stays workspace-relative, ``--db`` and
``--project-id`` come together, and a bare ``harness`` lists its commands."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness import ConfigError, HarnessError, find_project_root, load_config
from tests.cli import ACME_DB, harness_cli


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def mono(tmp_path: Path) -> Path:
    """A git repository: rules at the root, in ``packages/parser`` and in its ``src``."""
    root = tmp_path / "mono"
    (root / "packages" / "parser" / "src").mkdir(parents=True)
    (root / "packages" / "payments").mkdir()
    (root / "AGENTS.md").write_text("root rule\n")
    (root / "packages" / "parser" / "AGENTS.md").write_text("parser rule\n")
    (root / "packages" / "parser" / "src" / "AGENTS.md").write_text("src rule\n")
    (root / "packages" / "parser" / "src" / "tokenize.ts").write_text("export {}\n")
    (root / "packages" / "payments" / "AGENTS.md").write_text("payments rule\n")
    git("init", "-q", cwd=root)
    return root


def listed(stdout: str) -> list[str]:
    """The instruction-file paths of a ``harness sources`` listing."""
    return [line.split()[2] for line in stdout.splitlines() if line[:4].strip().isdigit()]


def test_the_nearest_ancestor_holding_a_marker_is_the_root(mono: Path, tmp_path: Path) -> None:
    parser = mono / "packages" / "parser"
    assert find_project_root(parser / "src" / "tokenize.ts") == mono
    assert find_project_root(parser) == mono
    assert find_project_root(mono) == mono  # inclusive
    assert find_project_root(parser / "not-yet" / "x.ts") == mono  # need not exist
    assert find_project_root(tmp_path) is None
    (parser / ".hg").mkdir()
    assert find_project_root(parser / "src", markers=(".hg", ".git")) == parser
    assert find_project_root(parser / "src", markers=()) is None


def test_a_linked_worktree_and_a_nested_repository_are_roots(mono: Path, tmp_path: Path) -> None:
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x",
        cwd=mono)  # fmt: skip
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", str(linked), cwd=mono)
    assert (linked / ".git").is_file()  # a gitdir: file, not a directory
    assert find_project_root(linked / "packages") == linked
    nested = mono / "packages" / "payments"
    git("init", "-q", cwd=nested)
    assert find_project_root(nested) == nested


@pytest.mark.parametrize("markers", [".git", ("",), ("a/b",), (".",), ("..",)])
def test_markers_that_name_no_entry_are_refused(markers: object) -> None:
    with pytest.raises(HarnessError) as caught:
        find_project_root(".", markers=markers)  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError | ValueError)


def test_the_markers_are_configured(tmp_path: Path) -> None:
    assert load_config().project_root_markers == (".git",)
    config = tmp_path / "harness.toml"
    config.write_text('project_root_markers = [".git", ".hg"]\n')
    assert load_config(config).project_root_markers == (".git", ".hg")
    config.write_text('project_root_markers = ["a/b"]\n')
    with pytest.raises(ConfigError, match="project_root_markers"):
        load_config(config)


def test_a_workspace_inside_a_project_is_promoted_and_scoped(mono: Path) -> None:
    done = harness_cli("sources", "packages/parser", cwd=mono)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        f"workspace {mono} (project root of packages/parser)",
        "target packages/parser",
    ]
    # the root's rules and the package's, not its subdirectory's nor a sibling's
    assert listed(done.stdout) == ["AGENTS.md", "packages/parser/AGENTS.md"]


def test_the_workspace_defaults_to_the_current_directory(mono: Path) -> None:
    parser = mono / "packages" / "parser"
    done = harness_cli("sources", cwd=parser)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [
        f"workspace {mono} (project root of {parser})",
        "target packages/parser",
    ]
    at_root = harness_cli("sources", cwd=mono)
    assert at_root.returncode == 0, at_root.stderr
    assert "project root of" not in at_root.stdout  # the root is used as it is
    assert len(listed(at_root.stdout)) == 4


def test_no_project_root_keeps_the_workspace(mono: Path) -> None:
    done = harness_cli("sources", "packages/parser", "--no-project-root", cwd=mono)
    assert done.returncode == 0, done.stderr
    assert "project root of" not in done.stdout
    assert listed(done.stdout) == ["AGENTS.md", "src/AGENTS.md"]  # relative to the package


def test_debug_says_so_on_stderr_when_stdout_is_json(mono: Path) -> None:
    done = harness_cli("debug", "packages/parser", "--agent", "reviewer", "--json", cwd=mono)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout)
    [files] = [layer for layer in manifest["layers"] if layer["name"] == "instruction_files"]
    assert files["kept"] == ["AGENTS.md", "packages/parser/AGENTS.md"]
    assert f"harness: workspace {mono} (project root of packages/parser)" in done.stderr
    text = harness_cli("debug", "packages/parser", "--agent", "reviewer", cwd=mono)
    assert text.stdout.splitlines()[:3] == [
        f"workspace {mono} (project root of packages/parser)",
        "target packages/parser",
        "harness debug: agent reviewer, no project",
    ]


def test_a_target_relative_to_the_current_directory_is_refused_with_the_path_to_use(
    mono: Path,
) -> None:
    parser = mono / "packages" / "parser"
    done = harness_cli("sources", "--target", "src/tokenize.ts", cwd=parser)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--target packages/parser/src/tokenize.ts" in done.stderr
    fine = harness_cli("sources", "--target", "packages/parser/src/tokenize.ts", cwd=parser)
    assert fine.returncode == 0, fine.stderr
    assert "packages/parser/src/AGENTS.md" in listed(fine.stdout)
    new_file = harness_cli("sources", "--target", "src/new.ts", cwd=parser)  # exists nowhere
    assert new_file.returncode == 0, new_file.stderr


def test_a_configured_marker_promotes_too(mono: Path, tmp_path: Path) -> None:
    parser = mono / "packages" / "parser"
    (parser / ".hg").mkdir()
    config = tmp_path / "harness.toml"
    config.write_text('project_root_markers = [".hg"]\n')
    done = harness_cli("sources", "src", "--config", str(config), cwd=parser)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"workspace {parser} (project root of src)"


@pytest.mark.parametrize(
    ("options", "missing"),
    [
        (["--db", str(ACME_DB)], "--db needs --project-id"),
        (["--project-id", "acme"], "--project-id needs --db"),
    ],
)
def test_db_and_project_id_come_together(mono: Path, options: list[str], missing: str) -> None:
    for command in ("debug", "sources"):
        done = harness_cli(command, "--agent", "reviewer", *options, cwd=mono)
        assert done.returncode == 2, done.stdout
        assert done.stderr.startswith("harness: error: ") and missing in done.stderr
        assert done.stderr.count("\n") == 1 and done.stdout == ""


def test_a_bare_harness_prints_the_usage_and_the_commands() -> None:
    done = harness_cli()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: harness")
    for command in ("debug", "sources", "manifests", "replay", "diff"):
        assert f"\n    {command}" in done.stdout, command
