"""``SkillCatalog.discover``: where skills are found, the bounds, and the workspace's rules,
on real files (published ``SKILL.md`` files among them)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from harness import SkillCatalog
from harness.config import HarnessConfig
from tests.skills.support import real_workspace, skill_md, write_skill


async def discover(workspace: Path, **options: object) -> SkillCatalog:
    with anyio.fail_after(30):
        return await SkillCatalog.discover(workspace, **options)  # type: ignore[arg-type]


async def test_published_skills_are_found_in_every_default_directory(tmp_path: Path) -> None:
    workspace = real_workspace(tmp_path)
    catalog = await discover(workspace)
    by_name = {skill.name: skill for skill in catalog.skills}
    assert sorted(by_name) == [
        "brand-guidelines",
        "gh-address-comments",
        "internal-comms",
        "template-skill",
    ]
    comments = by_name["gh-address-comments"]
    assert comments.path == ".codex/skills/gh-address-comments/SKILL.md"
    assert comments.metadata == {"short-description": "Address comments in a GitHub PR review"}
    assert comments.resources == (".codex/skills/gh-address-comments/scripts/fetch_comments.py",)
    assert by_name["internal-comms"].license == "Complete terms in LICENSE.txt"
    assert by_name["internal-comms"].description.startswith("A set of resources")
    # the published template's name differs from its directory: a warning, and it loads
    assert any(
        "template/SKILL.md" in w and "must match skill name 'template-skill'" in w
        for w in catalog.warnings
    )
    data = (workspace / ".claude/skills/brand-guidelines/SKILL.md").read_bytes()
    import hashlib

    assert by_name["brand-guidelines"].digest == hashlib.sha256(data).hexdigest()


async def test_nested_packages_skills_appear_only_when_a_target_lies_in_them(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path, ".claude/skills/root-skill", skill_md("root-skill"))
    write_skill(tmp_path, "pkg/api/.agents/skills/api-skill", skill_md("api-skill"))
    write_skill(tmp_path, "other/.agents/skills/other-skill", skill_md("other-skill"))
    plain = await discover(tmp_path)
    assert [skill.name for skill in plain.skills] == ["root-skill"]
    scoped = await discover(tmp_path, targets=["pkg/api/handler.py"])
    assert [skill.name for skill in scoped.skills] == ["api-skill", "root-skill"]
    assert scoped.get("api-skill").path == "pkg/api/.agents/skills/api-skill/SKILL.md"


async def test_six_levels_are_found_and_deeper_is_warned(tmp_path: Path) -> None:
    six = "/".join(["d"] * 5) + "/six"
    write_skill(tmp_path, f".claude/skills/{six}", skill_md("six"))
    write_skill(tmp_path, f".claude/skills/{six}/seven", skill_md("seven"))
    catalog = await discover(tmp_path)
    assert [skill.name for skill in catalog.skills] == ["six"]
    assert any(
        w.startswith(".claude/skills: 1 director") and "more than 6 levels" in w
        for w in catalog.warnings
    )


async def test_at_most_2000_directories_per_skills_directory(tmp_path: Path) -> None:
    skills = tmp_path / ".agents" / "skills"
    for index in range(2001):
        (skills / f"s{index:04d}").mkdir(parents=True)
    write_skill(tmp_path, ".agents/skills/a-first", skill_md("a-first"))
    write_skill(tmp_path, ".agents/skills/zz-last", skill_md("zz-last"))
    catalog = await discover(tmp_path)
    # the skills directory itself and 1,999 below it, in name order: the last ones are cut
    assert [skill.name for skill in catalog.skills] == ["a-first"]
    assert any("4 director(ies) not scanned: past the bound of 2000" in w for w in catalog.warnings)


async def test_only_a_file_named_exactly_skill_md_is_a_skill(tmp_path: Path) -> None:
    (tmp_path / ".claude/skills/lower").mkdir(parents=True)
    (tmp_path / ".claude/skills/lower/skill.md").write_text(skill_md("lower"))
    catalog = await discover(tmp_path)
    assert catalog.skills == ()
    assert any("lower/skill.md: not a skill" in w for w in catalog.warnings)


async def test_resources_are_listed_and_never_opened(tmp_path: Path) -> None:
    write_skill(tmp_path, ".claude/skills/pdf", skill_md("pdf"))
    os.mkfifo(tmp_path / ".claude/skills/pdf/pipe")  # opening it for reading would block
    (tmp_path / ".claude/skills/pdf/scripts").mkdir()
    (tmp_path / ".claude/skills/pdf/scripts/run.py").write_text("print('hi')\n")
    catalog = await discover(tmp_path)
    activation = await catalog.activate("pdf", reason="the user attached a PDF")
    assert activation.resources == (
        ".claude/skills/pdf/pipe",
        ".claude/skills/pdf/scripts/run.py",
    )


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


async def test_ignored_vendored_and_symlinked_directories_are_not_read(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".codex/\nsecret.md\n")
    write_skill(tmp_path, ".codex/skills/hidden", skill_md("hidden"))
    write_skill(tmp_path, ".claude/skills/node_modules/vendored", skill_md("vendored"))
    write_skill(tmp_path, "elsewhere/linked", skill_md("linked"))
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents/skills").symlink_to(tmp_path / "elsewhere")
    write_skill(tmp_path, ".claude/skills/kept", skill_md("kept"))
    (tmp_path / ".claude/skills/kept/secret.md").write_text("token\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/.claude").write_text("not a directory\n")
    catalog = await discover(tmp_path, targets=["pkg/x.py"])
    assert [skill.name for skill in catalog.skills] == ["kept"]
    assert catalog.get("kept").resources == ()  # the ignored file is not even listed
    warnings = "\n".join(catalog.warnings)
    assert ".codex: skills not read: the directory is ignored by .gitignore" in warnings
    assert ".agents/skills: skills not read: a directory symlink" in warnings
    assert "pkg/.claude: skills not read: a file, not a directory" in warnings


async def test_a_symlinked_skill_md_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_skill(outside, "x", skill_md("escape"))
    workspace = tmp_path / "ws"
    (workspace / ".claude/skills/escape").mkdir(parents=True)
    (workspace / ".claude/skills/escape/SKILL.md").symlink_to(outside / "x/SKILL.md")
    write_skill(workspace, ".claude/skills/real", skill_md("real"))
    (workspace / ".claude/skills/twin").mkdir()
    (workspace / ".claude/skills/twin/SKILL.md").symlink_to("../real/SKILL.md")
    catalog = await discover(workspace)
    assert [skill.name for skill in catalog.skills] == ["real"]
    warnings = "\n".join(catalog.warnings)
    assert "escape/SKILL.md: skipped: a symlink whose real path lies outside" in warnings
    assert "twin/SKILL.md: skipped: the same file as .claude/skills/real/SKILL.md" in warnings


async def test_byte_cap_and_encoding(tmp_path: Path) -> None:
    big = write_skill(tmp_path, ".claude/skills/big", skill_md("big", body="x" * 5000))
    bom = tmp_path / ".claude/skills/bom"
    bom.mkdir()
    (bom / "SKILL.md").write_bytes(b"\xef\xbb\xbf" + skill_md("bom", "Caf\xff.").encode("latin-1"))
    config = HarnessConfig.model_validate({"instruction_files": {"max_bytes": 1024}})
    catalog = await discover(tmp_path, config=config)
    assert [skill.name for skill in catalog.skills] == ["bom"]
    assert catalog.get("bom").description == "Caf\ufffd."
    warnings = "\n".join(catalog.warnings)
    assert f"big/SKILL.md: skipped: {big.stat().st_size} bytes, over the max_bytes cap" in warnings
    assert "bom/SKILL.md: altered: leading UTF-8 byte order mark removed" in warnings
    assert "bom/SKILL.md: altered: invalid UTF-8 replaced with U+FFFD" in warnings


async def test_user_directories_are_read_only_when_configured(tmp_path: Path) -> None:
    user = tmp_path / "home-skills"
    write_skill(user, "mine", skill_md("mine"))
    write_skill(user, "shared", skill_md("shared", "the user's"))
    workspace = tmp_path / "ws"
    write_skill(workspace, ".claude/skills/shared", skill_md("shared", "the project's"))
    assert [s.name for s in (await discover(workspace)).skills] == ["shared"]
    config = HarnessConfig(user_skills_dirs=(str(user),))
    catalog = await discover(workspace, config=config)
    assert [(s.scope, s.name) for s in catalog.skills] == [("user", "mine"), ("project", "shared")]
    assert catalog.get("mine").path == f"user:{user}/mine/SKILL.md"
    assert catalog.get("shared").description == "the project's"
    assert any(
        w.startswith(f"user:{user}/shared/SKILL.md: skill 'shared' shadowed by "
                     ".claude/skills/shared/SKILL.md")
        for w in catalog.warnings
    )  # fmt: skip


async def test_collisions_deeper_wins_then_first_configured(tmp_path: Path) -> None:
    write_skill(tmp_path, ".claude/skills/fmt", skill_md("fmt", "root claude"))
    write_skill(tmp_path, ".agents/skills/fmt", skill_md("fmt", "root agents"))
    write_skill(tmp_path, "pkg/.codex/skills/fmt", skill_md("fmt", "nested codex"))
    root_only = await discover(tmp_path)
    assert root_only.get("fmt").description == "root agents"  # .agents/skills is listed first
    assert any(
        w.startswith(".claude/skills/fmt/SKILL.md: skill 'fmt' shadowed by .agents/skills/fmt")
        for w in root_only.warnings
    )
    scoped = await discover(tmp_path, targets=["pkg/x.py"])
    assert scoped.get("fmt").path == "pkg/.codex/skills/fmt/SKILL.md"
    shadowed = [w for w in scoped.warnings if "shadowed by pkg/.codex/skills/fmt" in w]
    assert len(shadowed) == 2


async def test_lenient_loads_with_warnings_and_skips_what_cannot_load(tmp_path: Path) -> None:
    write_skill(tmp_path, ".claude/skills/Odd_Name", skill_md("Odd_Name"))
    write_skill(tmp_path, ".claude/skills/nodesc", "---\nname: nodesc\n---\nbody\n")
    write_skill(tmp_path, ".claude/skills/broken", "---\nname: [broken\n---\nbody\n")
    write_skill(
        tmp_path,
        ".claude/skills/extra",
        "---\nname: extra\ndescription: d\nuser-invocable: false\nmetadata:\n  v: 1.10\n---\n",
    )
    catalog = await discover(tmp_path)
    assert [skill.name for skill in catalog.skills] == ["Odd_Name", "extra"]
    assert catalog.get("extra").extra == {"user-invocable": "false"}
    assert catalog.get("extra").metadata == {"v": "1.10"}  # a string, as written
    warnings = "\n".join(catalog.warnings)
    assert "Odd_Name/SKILL.md: name 'Odd_Name' must be lowercase" in warnings
    assert "nodesc/SKILL.md: missing required field 'description'; the skill is skipped" in warnings
    assert "broken/SKILL.md: invalid YAML in frontmatter at line 3" in warnings


async def test_a_missing_workspace_and_a_missing_user_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await discover(tmp_path / "nope")
    config = HarnessConfig(user_skills_dirs=(str(tmp_path / "none"),))
    catalog = await discover(tmp_path, config=config)
    assert catalog.warnings == (f"user:{tmp_path}/none: not read: no such directory",)
