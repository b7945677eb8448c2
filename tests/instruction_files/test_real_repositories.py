"""Skeletons of real public repositories: the chains, the files the default budgets keep, and
discovery against ``git check-ignore``.

Each ``fixtures/repos/<name>/`` holds only what decides the answers: the repository's
instruction files of every format (symlinks kept as symlinks: ``CLAUDE.md -> AGENTS.md``), its
``.gitignore`` files and empty placeholders for the targets (``SOURCE`` names the commit;
``extract.py`` rebuilds one from a mirror). Files over 40,000 bytes are cut at a line, still
far over the default instruction budget.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from harness import EXTENDED_LAYOUT, Harness, HarnessConfig
from harness.instruction_files import InstructionFiles, InstructionFilesSettings
from tests.workspace.ignore_cases import git

REPOS = Path(__file__).parent / "fixtures" / "repos"
ALL = ("agents", "claude", "gemini", "copilot", "cursor", "windsurf", "cline")
NAMES = ("AGENTS.md", "CLAUDE.md", "copilot-instructions.md")

# (repository, target, instruction files kept by the default budgets, dropped for budget)
CASES = [
    (
        "langfuse",
        "web/src/features/evals/v2/new-eval.ts",
        (
            "AGENTS.md",
            "web/AGENTS.md",
            "web/src/features/evals/AGENTS.md",
            "web/src/features/evals/v2/AGENTS.md",
        ),
        (),
    ),
    ("langfuse", "worker/src/app.ts", ("AGENTS.md", "worker/AGENTS.md"), ()),
    (  # one oversized deep file no longer takes the root with it (fit_whole_units)
        "langfuse",
        "web/.agents/skills/vercel-react-best-practices/rules/x.md",
        ("AGENTS.md", "web/AGENTS.md"),
        ("web/.agents/skills/vercel-react-best-practices/AGENTS.md",),
    ),
    (
        "gitbutler",
        "crates/but/src/alias.rs",
        (
            "AGENTS.md",
            ".github/copilot-instructions.md",
            "crates/AGENTS.md",
            "crates/but/AGENTS.md",
        ),
        (),
    ),
    (
        "gitbutler",
        "crates/but-core/src/branch/generate.rs",
        ("AGENTS.md", ".github/copilot-instructions.md", "crates/AGENTS.md"),
        (),
    ),
    (
        "gitbutler",
        "apps/lite/src/main.tsx",
        ("AGENTS.md", ".github/copilot-instructions.md", "apps/lite/AGENTS.md"),
        (),
    ),
    (
        "workers-sdk",
        "packages/wrangler/src/index.ts",
        ("AGENTS.md", "CLAUDE.md", "packages/wrangler/AGENTS.md"),
        (),
    ),
    (
        "workers-sdk",
        "packages/miniflare/src/cf.ts",
        ("AGENTS.md", "CLAUDE.md", "packages/miniflare/AGENTS.md"),
        (),
    ),
    ("workers-sdk", "tools/clean/clean.ts", ("AGENTS.md", "CLAUDE.md"), ()),
]


def _checkout(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(REPOS / name, root, symlinks=True)
    (root / "SOURCE").unlink()
    git(root, "init", "-q")
    return root


@pytest.mark.parametrize(("name", "target", "kept", "dropped"), CASES)
def test_chain_and_the_files_the_default_budgets_keep(
    tmp_path: Path, name: str, target: str, kept: tuple[str, ...], dropped: tuple[str, ...]
) -> None:
    root = _checkout(tmp_path, name)

    async def run() -> tuple[tuple[str, ...], tuple[str, ...], list[str]]:
        with anyio.fail_after(60):
            config = HarnessConfig(layout=EXTENDED_LAYOUT, formats=ALL, agents={"dev": "Code."})
            async with Harness(config) as harness:
                build = await harness.build(root, agent="dev", targets=[target])
        layer = next(x for x in build.prompt.layers if x.name == "instruction_files")
        return layer.kept, layer.dropped, list(build.warnings)

    got_kept, got_dropped, warnings = anyio.run(run)
    assert got_kept == kept
    assert got_dropped == dropped
    for path in dropped:  # each drop names the budget that would have kept it
        assert any(w.startswith(f"{path}: required_policy_missing") for w in warnings)


# Instruction files placed where each repository's own .gitignore rules decide (ignored,
# re-included, or neither), for the differential against git.
PROBES = {
    "langfuse": (
        ".claude/worktrees/feature/AGENTS.md",
        ".claude/skills/AGENTS.md",
        "web/AGENTS.local.md/AGENTS.md",
        "web/src/CLAUDE.md",
    ),
    "gitbutler": (
        ".agents/notes/AGENTS.md",
        ".agents/skills/AGENTS.md",
        ".claude/AGENTS.md",
        "apps/lite/dist/AGENTS.md",
    ),
    "workers-sdk": (
        ".agents/skills/AGENTS.md",
        "packages/wrangler/AGENTS.local.md/CLAUDE.md",
        "packages/miniflare/dist/AGENTS.md",
        "tools/CLAUDE.md",
    ),
}


def _git_visible(root: Path) -> set[str]:
    """Instruction-named paths git does not ignore (``git check-ignore``: exit 1 = not)."""
    names = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.name in NAMES and ".git" not in p.relative_to(root).parts[:1]
    ]
    out = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(names),
        capture_output=True,
        text=True,
    ).stdout
    return set(names) - set(out.split())


@pytest.mark.parametrize("name", ["langfuse", "gitbutler", "workers-sdk"])
def test_full_discovery_reads_what_git_does_not_ignore(tmp_path: Path, name: str) -> None:
    root = _checkout(tmp_path, name)
    for rel in PROBES[name]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"probe {rel}\n")
    files = InstructionFiles(InstructionFilesSettings(formats=ALL))

    async def run() -> tuple[set[str], list[str]]:
        with anyio.fail_after(60):
            found = await files.load(root, agent="dev")
        return {source.path for source in found}, list(found.warnings)

    paths, warnings = anyio.run(run)
    # a symlink to a file already loaded is read once: its warning names it
    twice = {w.split(":", 1)[0] for w in warnings if "the same file as" in w}
    assert paths | twice == _git_visible(root)
    assert not paths & twice


def test_langfuse_ignored_override_is_read_as_a_local_file(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "langfuse")  # its .gitignore lists **/AGENTS.override.md
    (root / "worker" / "AGENTS.override.md").write_text("local override\n")
    files = InstructionFiles(InstructionFilesSettings())

    async def run() -> list[str]:
        with anyio.fail_after(60):
            found = await files.load(root, agent="dev", targets=["worker/src/app.ts"])
        return [source.path for source in found]

    assert anyio.run(run) == ["AGENTS.md", "worker/AGENTS.override.md"]
