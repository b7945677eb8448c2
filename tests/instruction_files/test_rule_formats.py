"""The rule-file formats (gemini, copilot, cursor, windsurf, cline, and claude's rules):
rules directories, frontmatter, triggers, globs, precedence across formats and depths, and
the walk's rules for their files. Real files (``rule_files/``: the shapes public
repositories use), real git."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionSet,
    discover,
)
from harness.instruction_files.discovery import walk_workspace
from harness.instruction_files.discovery._frontmatter import Frontmatter, split_frontmatter
from harness.instruction_files.discovery._globs import (
    MAX_PATTERNS,
    expand_braces,
    glob_list,
    glob_problems,
    matching,
    scoped,
)
from harness.instruction_files.discovery._incremental import walk
from harness.workspace import resolve_workspace
from tests.instruction_files.conftest import Writer
from tests.workspace.ignore_cases import git

RULE_FILES = Path(__file__).parent / "rule_files"
ALL = ("agents", "claude", "gemini", "copilot", "cursor", "windsurf", "cline")


def _settings(*formats: str, **more: object) -> InstructionFilesSettings:
    return InstructionFilesSettings(formats=formats or ALL, walk_threads=1, **more)  # type: ignore[arg-type]


@pytest.fixture
def real(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(RULE_FILES, root)
    (root / "README.md").unlink()
    return root


def _paths(found: InstructionSet) -> list[str]:
    return [source.path for source in found]


def test_real_shapes_become_sources_with_their_triggers(real: Path) -> None:
    found = walk_workspace(resolve_workspace(real), _settings())  # every rule, unfiltered
    shown = {s.path: (s.format, s.trigger, s.globs) for s in found}
    assert shown == {
        ".github/copilot-instructions.md": ("copilot", "always", ()),
        ".github/instructions/python.instructions.md": ("copilot", "paths", ("**/*.py",)),
        ".cursor/rules/always.mdc": ("cursor", "always", ()),
        ".cursor/rules/frontend/react.mdc": ("cursor", "paths", ("src/**/*.tsx",)),
        ".cursor/rules/typescript.mdc": ("cursor", "paths", ("**/*.ts", "**/*.tsx")),
        ".windsurf/rules/go.md": ("windsurf", "paths", ("*.go",)),
        ".windsurf/rules/style.md": ("windsurf", "always", ()),
        ".clinerules/01-general.md": ("cline", "always", ()),
        ".clinerules/02-tests.md": ("cline", "paths", ("tests/**", "**/test_*.py")),
        "web/.cursor/rules/components.mdc": ("cursor", "paths", ("web/components/**/*.vue",)),
    }
    assert {(rule.path, rule.reason) for rule in found.passed} == {
        (".cursor/rules/agent-requested.mdc", "description only: catalog"),
        (".cursor/rules/manual.mdc", "manual: neither globs nor alwaysApply"),
        (".github/instructions/review.instructions.md", "excluded for agent coding-agent"),
        (".github/instructions/notes.instructions.md", "description only: catalog"),
        (".windsurf/rules/deploy.md", "description only: catalog"),
    }
    assert found.warnings == ()
    react = next(s for s in found if s.path.endswith("react.mdc"))
    assert react.metadata == {"tags": ["frontend", "react"]}
    assert react.content == "Function components only.\n"  # the frontmatter is never rendered
    assert all(not s.content.startswith("---") for s in found)


def test_precedence_is_by_scoping_directory_then_configured_format_order(real: Path) -> None:
    (real / "AGENTS.md").write_text("agents root\n")
    (real / "GEMINI.md").write_text("gemini root\n")
    (real / "CLAUDE.md").write_text("claude root\n")
    (real / "web" / "AGENTS.md").write_text("agents web\n")
    (real / "web" / ".clinerules").write_text("cline web\n")
    found = discover(real, _settings(), targets=["web/components/a.vue"])
    assert _paths(found) == [
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        ".github/copilot-instructions.md",
        ".cursor/rules/always.mdc",
        ".windsurf/rules/style.md",
        ".clinerules/01-general.md",
        "web/AGENTS.md",
        "web/.cursor/rules/components.mdc",
        "web/.clinerules",
    ]
    reverse = discover(real, _settings(*reversed(ALL)), targets=["web/components/a.vue"])
    assert _paths(reverse)[:2] == [".clinerules/01-general.md", ".windsurf/rules/style.md"]
    assert _paths(reverse)[-1] == "web/AGENTS.md"


def test_path_rules_apply_only_to_matching_targets(real: Path) -> None:
    settings = _settings()
    none = discover(real, settings)
    assert all(s.trigger == "always" for s in none)  # no targets: no path rule
    ts = discover(real, settings, targets=["src/app/view.tsx"])
    assert ".cursor/rules/frontend/react.mdc" in _paths(ts)
    assert ".cursor/rules/typescript.mdc" in _paths(ts)
    assert ".github/instructions/python.instructions.md" not in _paths(ts)
    go = discover(real, settings, targets=["main.go", "pkg/x.go"])
    assert ".windsurf/rules/go.md" in _paths(go)  # "*.go" matched main.go (not across /)
    only_deep = discover(real, settings, targets=["pkg/x.go"])
    assert ".windsurf/rules/go.md" not in _paths(only_deep)


def test_formats_not_configured_are_not_read(real: Path) -> None:
    assert discover(real, _settings("agents")).sources == ()
    assert {s.format for s in discover(real, _settings("cursor"))} == {"cursor"}


def test_copilot_agent_setting_decides_exclusion(real: Path) -> None:
    review = discover(real, _settings("copilot", copilot_agent="code-review"), targets=["x"])
    assert ".github/instructions/review.instructions.md" in _paths(review)


def test_unparseable_frontmatter_is_skipped_naming_file_and_line(write: Writer, ws: Path) -> None:
    write(".cursor/rules/bad.mdc", "---\nglobs: [a\n  nested: {\n---\nbody\n")
    write(".windsurf/rules/open.md", "---\ntrigger: glob\nbody without a closing line\n")
    found = discover(ws, _settings())
    assert found.sources == ()
    assert len(found.warnings) == 2
    bad, unclosed = sorted(found.warnings)
    assert bad.startswith(".cursor/rules/bad.mdc: skipped: frontmatter cannot be parsed (line ")
    assert unclosed.startswith(".windsurf/rules/open.md: skipped: frontmatter cannot be parsed")
    assert "(line 1: the block opened by '---' is never closed)" in unclosed


def test_rules_files_keep_every_walk_rule(write: Writer, ws: Path) -> None:
    git(ws, "init", "-q")
    write(".gitignore", ".cursor/rules/private.mdc\nignored/\n.secret\n")
    write(".cursor/rules/private.mdc", "---\nalwaysApply: true\n---\nsecret\n")
    write(".cursor/rules/.gitignore", "local-*.mdc\n")
    write(".cursor/rules/local-x.mdc", "---\nalwaysApply: true\n---\nlocal\n")
    write(".cursor/rules/kept.mdc", "---\nalwaysApply: true\n---\nkept\n")
    write("ignored/.cursor/rules/x.mdc", "---\nalwaysApply: true\n---\nnever\n")
    write("node_modules/.cursor/rules/x.mdc", "---\nalwaysApply: true\n---\nnever\n")
    write(".secret", "token\n")
    (ws / ".cursor" / "rules" / "link.mdc").symlink_to("../../.secret")
    write(".cursor/rules/big.mdc", "---\nalwaysApply: true\n---\n" + "x" * 200)
    found = discover(ws, _settings("cursor", max_bytes=150))
    assert _paths(found) == [".cursor/rules/kept.mdc"]
    joined = "\n".join(found.warnings)
    assert ".cursor/rules/private.mdc: skipped: ignored by .gitignore" in joined
    assert ".cursor/rules/big.mdc: skipped: " in joined and "max_bytes" in joined
    assert ".cursor/rules/link.mdc: skipped" in joined


@pytest.mark.parametrize("targets", [(), ("src/x.ts",)])
def test_deny_read_holds_inside_rules_directories(
    write: Writer, ws: Path, targets: tuple[str, ...]
) -> None:
    write(".cursor/rules/secret.mdc", "---\nalwaysApply: true\n---\nSECRET\n")
    write(".cursor/rules/deep/kept.mdc", "---\nalwaysApply: true\n---\nkept\n")
    write(".github/copilot-instructions.md", "COPILOT\n")
    write(".github/instructions/a.instructions.md", "---\napplyTo: '**'\n---\nA\n")
    write(".github/.env", "TOKEN\n")
    deny = ("secret.mdc", "copilot-instructions.md", "instructions/", ".env")
    found = discover(ws, _settings("cursor", "copilot", deny_read=deny), targets=targets)
    assert _paths(found) == [".cursor/rules/deep/kept.mdc"]
    denied = [w.partition(":")[0] for w in found.warnings if "deny_read pattern" in w]
    assert denied == [
        ".cursor/rules/secret.mdc",
        ".github/copilot-instructions.md",
        ".github/instructions",
    ]


def test_a_scoped_walk_reads_rules_directories_on_its_chains_only(real: Path) -> None:
    (real / "api" / ".cursor" / "rules").mkdir(parents=True)
    (real / "api" / ".cursor" / "rules" / "a.mdc").write_text("---\nalwaysApply: true\n---\napi\n")
    found = discover(real, _settings("cursor"), targets=["web/x.vue"])
    assert "api/.cursor/rules/a.mdc" not in _paths(found)
    assert ".cursor/rules/always.mdc" in _paths(found)
    full = discover(real, _settings("cursor"))
    assert "api/.cursor/rules/a.mdc" in _paths(full)


def test_a_reload_after_an_edit_in_a_rules_directory_equals_a_cold_walk(real: Path) -> None:
    settings = _settings()
    _, snapshot = walk(str(real.resolve()), settings)
    rule = real / "web" / ".cursor" / "rules" / "components.mdc"
    rule.write_text("---\nalwaysApply: true\n---\nedited\n")
    new = real / ".cursor" / "rules" / "frontend" / "new.mdc"
    new.write_text("---\nalwaysApply: true\n---\nnew\n")
    (real / ".windsurf" / "rules" / "style.md").unlink()
    dirt = frozenset(
        {
            "web/.cursor/rules/components.mdc",
            ".cursor/rules/frontend/new.mdc",
            ".windsurf/rules/style.md",
        }
    )
    reloaded, after = walk(str(real.resolve()), settings, base=(snapshot, dirt))
    cold, _ = walk(str(real.resolve()), settings)
    assert reloaded.sources == cold.sources
    assert reloaded.passed == cold.passed
    assert reloaded.warnings == cold.warnings
    assert after.walked < snapshot.walked


def test_frontmatter_tolerance() -> None:
    def fields(text: str) -> dict[str, object]:
        found = split_frontmatter(text)
        assert isinstance(found, Frontmatter)
        return found.fields

    assert fields("---\nglobs: **/*.ts\n---\n") == {"globs": "**/*.ts"}
    assert fields("---\nglobs: {a,b}/*.ts\n---\n") == {"globs": "{a,b}/*.ts"}
    assert fields("---\nglobs: '*.py'\n---\n") == {"globs": "*.py"}
    assert fields("---\nglobs:\n  - a/**\n  - '*.md'\n---\n") == {"globs": ["a/**", "*.md"]}
    assert fields("---\n---\nbody") == {}
    plain = split_frontmatter("no header\n---\n")
    assert isinstance(plain, Frontmatter) and plain.body == "no header\n---\n"


def test_glob_lists_braces_and_bounds() -> None:
    assert glob_list("**/*.{ts,tsx}, docs/**") == (["**/*.{ts,tsx}", "docs/**"], [])
    assert glob_list(["a", "b, c"]) == (["a", "b", "c"], [])
    assert glob_list([3])[1] == ["glob 3 is not a string: ignored"]
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert expand_braces("{x}") == ["{x}"]  # no comma: literal, as in shells
    assert expand_braces("a{b,c") == ["a{b,c"]  # unbalanced: literal
    big = "{0,1,2,3,4,5,6,7,8,9}" * 4  # 10,000 patterns
    assert expand_braces(big) is None
    assert "past 1000 patterns" in glob_problems([big])[0]
    assert matching([big], ["0000"]) is None
    assert expand_braces("{0,1,2,3,4,5,6,7,8,9}" * 3) is not None  # exactly 1,000
    assert MAX_PATTERNS == 1000
    assert glob_problems(["src/[a"]) == ["glob 'src/[a' is invalid (it can match nothing)"]
    assert scoped(["./src/*.py", "/x"], "we[b]") == ("we\\[b]/src/*.py", "we\\[b]/x")
    assert matching(scoped(["src/*.py"], "we[b]"), ["we[b]/src/a.py"]) is not None
    assert matching(["src/**/*.ts"], ["src/a/b/c.ts"]) == ("src/**/*.ts", "src/a/b/c.ts")
    assert matching(["src/*.ts"], ["src/a/c.ts"]) is None


def test_claude_rules_and_dot_claude_memory(write: Writer, ws: Path) -> None:
    write("CLAUDE.md", "shared\n")
    write(".claude/CLAUDE.md", "dot claude\n")
    write("CLAUDE.local.md", "local\n")
    write(".claude/rules/api/http.md", "---\npaths: src/api/**/*.ts\n---\nhttp\n")
    write(".claude/rules/style.md", "style\n")
    found = discover(ws, _settings("claude"), targets=["src/api/v1/x.ts"])
    assert _paths(found) == [
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        ".claude/rules/api/http.md",
        ".claude/rules/style.md",
    ]


def test_gemini_files_at_every_depth(write: Writer, ws: Path) -> None:
    write("GEMINI.md", "root\n")
    write("pkg/GEMINI.md", "pkg\n")
    found = discover(ws, _settings("gemini"))
    assert [(s.path, s.kind, s.format) for s in found] == [
        ("GEMINI.md", "root", "gemini"),
        ("pkg/GEMINI.md", "directory", "gemini"),
    ]


def _load(
    ws: Path, settings: InstructionFilesSettings, targets: list[str] | None = None
) -> InstructionSet:
    async def main() -> InstructionSet:
        with anyio.fail_after(20):
            files = InstructionFiles(settings)
            return await files.load(ws, agent="a", targets=targets or ())

    return anyio.run(main)


def test_other_formats_files_are_named_when_the_configured_ones_find_nothing(
    write: Writer, ws: Path
) -> None:
    write("CLAUDE.md", "claude\n")
    write("pkg/.cursorrules", "cursor\n")
    found = _load(ws, _settings("agents"), ["pkg/x.py"])
    assert found.sources == ()
    (hint,) = found.warnings
    assert "CLAUDE.md (claude), pkg/.cursorrules (cursor) exist" in hint
    assert 'formats = ["agents", "claude", "cursor"]' in hint
    assert "pkg/.cursorrules" not in _load(ws, _settings("agents")).warnings[0]  # root only
    write("AGENTS.md", "agents\n")
    assert _load(ws, _settings("agents")).warnings == ()


def test_files_above_a_workspace_below_its_project_root_are_named(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("root rules\n")
    (repo / "packages" / "a").mkdir(parents=True)
    (repo / "packages" / "CLAUDE.md").write_text("not configured\n")
    (repo / "packages" / "a" / "AGENTS.md").write_text("package rules\n")
    found = _load(repo / "packages" / "a", _settings("agents"))
    assert [s.path for s in found] == ["AGENTS.md"]
    (warning,) = found.warnings
    assert warning.startswith(
        "instruction files above the workspace were not read: ../../AGENTS.md"
    )
    assert "project root is ../.." in warning and "CLAUDE.md" not in warning
    assert _load(repo, _settings("agents")).warnings == ()
