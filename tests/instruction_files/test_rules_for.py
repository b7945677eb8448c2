"""``rules_for`` / ``harness rules``: every candidate rule file for the targets, applied or
not, and the one-line reason. Real files, real git, the real command line."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessConfig
from harness.cli import main
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    RulesExplanation,
)
from tests.workspace.ignore_cases import git

RULE_FILES = Path(__file__).parent / "rule_files"
ALL = ("agents", "claude", "gemini", "copilot", "cursor", "windsurf", "cline")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(RULE_FILES, root)
    (root / "README.md").unlink()
    git(root, "init", "-q")
    (root / ".gitignore").write_text(".cursor/rules/secret.mdc\n")
    (root / "AGENTS.md").write_text("root rules\n")
    (root / "web" / "AGENTS.override.md").write_text("override\n")
    (root / "web" / "AGENTS.md").write_text("shadowed\n")
    (root / ".cursor" / "rules" / "secret.mdc").write_text("---\nalwaysApply: true\n---\nx\n")
    return root


def _explain(root: Path, targets: list[str], **settings: object) -> RulesExplanation:
    async def run() -> RulesExplanation:
        with anyio.fail_after(20):
            chosen = InstructionFilesSettings(formats=ALL, walk_threads=1, **settings)  # type: ignore[arg-type]
            return await InstructionFiles(chosen).rules_for(root, targets=targets)

    return anyio.run(run)


def _reasons(explanation: RulesExplanation) -> dict[str, tuple[bool, str]]:
    return {rule.path: (rule.applied, rule.reason) for rule in explanation}


def test_every_reason(repo: Path) -> None:
    explanation = _explain(repo, ["src/app.tsx", "web/components/x.vue"])
    reasons = _reasons(explanation)
    assert reasons["AGENTS.md"] == (True, "always")
    assert reasons[".cursor/rules/frontend/react.mdc"] == (
        True,
        "glob 'src/**/*.tsx' matched src/app.tsx",
    )
    assert reasons["web/.cursor/rules/components.mdc"] == (
        True,
        "glob 'web/components/**/*.vue' matched web/components/x.vue",
    )
    assert reasons[".github/instructions/python.instructions.md"] == (False, "no glob matched")
    assert reasons[".cursor/rules/agent-requested.mdc"] == (False, "description only: catalog")
    assert reasons[".github/instructions/review.instructions.md"] == (
        False,
        "excluded for agent coding-agent",
    )
    assert reasons["web/AGENTS.md"] == (False, "shadowed by AGENTS.override.md")
    assert reasons[".cursor/rules/secret.mdc"] == (False, "ignored by .gitignore:1")
    assert explanation.targets == ("src/app.tsx", "web/components/x.vue")
    assert explanation.chain == (".", "web")  # the directories that exist
    applied = [rule.path for rule in explanation.applied]
    assert applied[0] == "AGENTS.md" and "web/AGENTS.override.md" in applied
    text = str(explanation)
    assert "not applied  .cursor/rules/secret.mdc" in text


def test_the_deciding_ignore_file_and_line_are_named(repo: Path) -> None:
    """As ``git check-ignore -v``: the last matching pattern's file and line, a nested
    ``.gitignore`` and ``.git/info/exclude`` alike."""
    (repo / ".gitignore").write_text("# secrets\n*.tmp\n.cursor/rules/secret.mdc\n")
    (repo / "web" / ".gitignore").write_text("\n.cursor/\n!.cursor/\n.cursor/rules/*.mdc\n")
    (repo / ".git" / "info" / "exclude").write_text("# mine\nGEMINI.md\n")
    (repo / "GEMINI.md").write_text("gemini\n")
    reasons = _reasons(_explain(repo, ["web/components/x.vue"]))
    assert reasons[".cursor/rules/secret.mdc"] == (False, "ignored by .gitignore:3")
    assert reasons["web/.cursor/rules/components.mdc"] == (False, "ignored by web/.gitignore:4")
    assert reasons["GEMINI.md"] == (False, "ignored by .git/info/exclude:2")


def test_local_files_are_read_although_ignored_and_say_so(repo: Path) -> None:
    (repo / ".gitignore").write_text("/AGENTS.override.md\nCLAUDE.local.md\nCLAUDE.md\nbuild/\n")
    (repo / "AGENTS.override.md").write_text("my override\n")
    (repo / "CLAUDE.local.md").write_text("my notes\n")
    (repo / "CLAUDE.md").write_text("generated, ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "AGENTS.override.md").write_text("inside an ignored directory\n")
    (repo / "build" / "CLAUDE.local.md").write_text("inside an ignored directory\n")
    explanation = _explain(repo, ["build/x.js", "web/x.ts"])
    reasons = _reasons(explanation)
    assert reasons["AGENTS.override.md"] == (True, "local file")
    assert reasons["CLAUDE.local.md"] == (True, "local file")
    assert reasons["web/AGENTS.override.md"] == (True, "always")  # "/..." is the root only
    assert reasons["AGENTS.md"] == (False, "shadowed by AGENTS.override.md")
    assert reasons["CLAUDE.md"] == (False, "ignored by .gitignore:3")
    assert not [path for path in reasons if path.startswith("build/")]
    assert "build" in explanation.chain  # on the chain, but ignored: nothing in it is read


def test_copilot_apply_to_everything_is_still_a_path_rule(repo: Path) -> None:
    """``applyTo: "**"`` matches every target, but a build without targets applies no path
    rule, so it is listed as not applied (Copilot itself applies it always)."""
    instructions = repo / ".github" / "instructions"
    (instructions / "all.instructions.md").write_text('---\napplyTo: "**"\n---\nBe brief.\n')
    without = _reasons(_explain(repo, []))
    assert without[".github/instructions/all.instructions.md"] == (
        False,
        "no targets: a path rule applies only when a target matches its globs",
    )
    with_target = _reasons(_explain(repo, ["deep/down/x.py"]))
    assert with_target[".github/instructions/all.instructions.md"] == (
        True,
        "glob '**' matched deep/down/x.py",
    )


def test_without_targets_path_rules_are_listed_as_not_applied(repo: Path) -> None:
    reasons = _reasons(_explain(repo, []))
    assert reasons[".windsurf/rules/go.md"] == (
        False,
        "no targets: a path rule applies only when a target matches its globs",
    )


def test_harness_rules_for_matches_what_a_build_reads(repo: Path) -> None:
    async def run() -> tuple[RulesExplanation, list[str]]:
        with anyio.fail_after(30):
            config = HarnessConfig(formats=ALL, agents={"dev": "You write code."})
            async with Harness(config) as harness:
                explanation = await harness.rules_for(repo, targets=["src/app.tsx"])
                build = await harness.build(repo, agent="dev", targets=["src/app.tsx"])
                return explanation, [source.path for source in build.instruction_set]

    explanation, built = anyio.run(run)
    assert [rule.path for rule in explanation.applied] == built


def test_cli_rules(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["rules", str(repo), "--target", "main.go", "--format", "windsurf"])
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines()[0] == "formats windsurf"
    rows = [line.split() for line in out.splitlines()[1:]]
    assert rows[0][:6] == [
        "applied",
        ".windsurf/rules/go.md",
        "[windsurf]",
        "glob",
        "'*.go'",
        "matched",
    ]
    assert rows[2][:3] == ["not", "applied", ".windsurf/rules/deploy.md"]
    assert main(["rules", str(repo), "--format", "nope"]) == 2
    assert "unknown instruction format 'nope'" in capsys.readouterr().err


def test_cli_rules_from_a_package_directory_promotes_to_the_project_root(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", str(repo / "web"), "--format", "agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"workspace {repo.resolve()} (project root of ")
    assert "target web" in lines
    assert any(line.split()[:2] == ["applied", "web/AGENTS.override.md"] for line in lines)


def test_a_chain_file_dropped_for_budget_is_a_warning_naming_the_budget(tmp_path: Path) -> None:
    from harness import EXTENDED_LAYOUT

    (tmp_path / "AGENTS.md").write_text("root rules " * 40 + "\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "AGENTS.md").write_text("deep rules " * 400 + "\n")

    async def run() -> tuple[list[str], tuple[str, ...]]:
        with anyio.fail_after(30):
            config = HarnessConfig(layout=EXTENDED_LAYOUT, agents={"dev": "You write code."})
            async with Harness(config) as harness:
                build = await harness.build(
                    tmp_path,
                    agent="dev",
                    targets=["pkg/x.py"],
                    budgets={"instruction_files": 500},
                )
                layer = next(x for x in build.prompt.layers if x.name == "instruction_files")
                return list(build.warnings), layer.kept

    warnings, kept = anyio.run(run)
    assert kept == ("AGENTS.md",)  # fit_whole_units keeps the root, drops the big deep file
    (warning,) = [w for w in warnings if "required_policy_missing" in w]
    assert warning.startswith("pkg/AGENTS.md: required_policy_missing: ")
    assert "dropped for the budget of 500 tokens" in warning
    assert "--budget instruction_files=" in warning
