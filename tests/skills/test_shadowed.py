"""A skill another of its name wins over is not rendered, and the build says so like any unit
it did not render: an ``excluded`` entry of the ``skills`` layer, reason ``shadowed``, ``by``
the winner, in the manifest, the debug print and the replayable record."""

from __future__ import annotations

from pathlib import Path

import anyio

from harness import Harness, SkillCatalog
from harness.debug import format_build
from harness.manifests import ManifestStore
from tests.skills.support import extended, skill_md, write_skill

WINNER = ".agents/skills/fmt/SKILL.md"
LOSER = ".claude/skills/fmt/SKILL.md"


def workspace(root: Path, user: Path) -> Path:
    write_skill(root, ".claude/skills/fmt", skill_md("fmt", "Formats, the old way."))
    write_skill(root, ".agents/skills/fmt", skill_md("fmt", "Formats, the project way."))
    write_skill(root, "pkg/.claude/skills/lint", skill_md("lint", "Lints, deeper."))
    write_skill(root, ".claude/skills/lint", skill_md("lint", "Lints, shallower."))
    write_skill(user, "fmt", skill_md("fmt", "Formats, the user's way."))
    return root


async def test_each_loser_is_an_excluded_entry_naming_its_winner(tmp_path: Path) -> None:
    user = tmp_path / "user"
    root = workspace(tmp_path / "ws", user)
    store = tmp_path / "manifests.db"
    config = extended(user_skills_dirs=[str(user)])
    with anyio.fail_after(60):
        catalog = await SkillCatalog.discover(root, targets=["pkg/x.py"], config=config)
        async with Harness(config, manifests=store) as h:
            build = await h.build(root, agent="reviewer", targets=["pkg/x.py"], skills=catalog)
        async with ManifestStore.open(store) as manifests:
            recorded = await manifests.get(build.prompt.manifest_id or "")
            replay = await manifests.replay(build.prompt.manifest_id or "")
    losers = [
        (".claude/skills/lint/SKILL.md", "pkg/.claude/skills/lint/SKILL.md"),  # the deeper wins
        (LOSER, WINNER),  # the first-configured skills directory wins
        (f"user:{user}/fmt/SKILL.md", WINNER),  # the project wins over the user
    ]
    assert sorted(catalog.shadowed) == sorted(losers)
    expected = [
        {"layer": "skills", "id": loser, "reason": "shadowed", "by": winner}
        for loser, winner in sorted(losers)
    ]
    skill_entries = [e for e in recorded["request"]["excluded"] if e["layer"] == "skills"]
    assert skill_entries == expected
    assert build.prompt.manifest()["request"] == recorded["request"]
    report = " ".join(format_build(build).split())  # long lines wrap
    assert f"removed {LOSER} (skills): shadowed by {WINNER}" in report
    assert "the old way" not in build.prompt.text and "the user's way" not in build.prompt.text
    assert replay.identical, replay.differences
    assert replay.prompt is not None and replay.prompt.text == build.prompt.text
    assert any(w.startswith(f"{LOSER}: skill 'fmt' shadowed by") for w in catalog.warnings)


async def test_no_collision_no_entry(tmp_path: Path) -> None:
    write_skill(tmp_path, ".claude/skills/fmt", skill_md("fmt"))
    with anyio.fail_after(60):
        catalog = await SkillCatalog.discover(tmp_path)
        async with Harness(extended()) as h:
            prompt = await h.build_prompt(tmp_path, agent="reviewer", skills=catalog)
    assert catalog.shadowed == () and catalog.excluded() == []
    assert "request" not in prompt.manifest()
