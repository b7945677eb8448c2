"""``SkillCache`` and ``invalidate(path)``: an edited ``SKILL.md`` is seen after an
``invalidate`` of it, by re-scanning only what that path can change (an audit hook counts
the directories listed and the files opened), and the catalog equals a cold discovery's."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio

from harness import Harness, SkillCatalog
from harness.skills import SkillCache
from tests.skills.support import extended, skill_md, write_skill

_EVENTS: list[tuple[str, str]] = []
_WATCHING: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING and event in ("open", "os.scandir"):
        path = args[0]
        _EVENTS.append((event, os.fsdecode(path) if isinstance(path, str | bytes) else ""))


sys.addaudithook(_audit)


def _workspace(tmp_path: Path, count: int = 30) -> Path:
    workspace = tmp_path / "ws"
    for index in range(count):
        name = f"skill-{index:02d}"
        write_skill(workspace, f".claude/skills/{name}", skill_md(name, f"Task {index}."))
        (workspace / f".claude/skills/{name}/notes.md").write_text("a resource\n")
    return workspace


async def _watched(workspace: Path, cache: SkillCache) -> tuple[SkillCatalog, list[str], int]:
    """The catalog, the files opened by name, and the directories listed."""
    _EVENTS.clear()
    _WATCHING.append(True)
    try:
        with anyio.fail_after(30):
            catalog = await SkillCatalog.discover(workspace, cache=cache)
    finally:
        _WATCHING.clear()
    opened = [path for event, path in _EVENTS if event == "open"]
    return catalog, opened, sum(event == "os.scandir" for event, _ in _EVENTS)


async def _cold(workspace: Path) -> SkillCatalog:
    with anyio.fail_after(30):
        return await SkillCatalog.discover(workspace)


async def test_an_edit_is_seen_after_invalidate_without_a_cold_walk(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    cache = SkillCache()
    first, opened, listed = await _watched(workspace, cache)
    assert len(first.skills) == 30 and opened.count("SKILL.md") == 30 and listed == 31
    edited = workspace / ".claude/skills/skill-07/SKILL.md"
    edited.write_text(skill_md("skill-07", "Task seven, edited."))
    again, opened, listed = await _watched(workspace, cache)
    assert again is first  # not invalidated: the catalog as it was, nothing read
    assert opened == [] and listed == 0
    cache.invalidate(edited)
    second, opened, listed = await _watched(workspace, cache)
    assert second.get("skill-07").description == "Task seven, edited."
    assert opened.count("SKILL.md") == 1  # only the edited skill is read again
    assert listed == 2  # .claude/skills (to see what appeared or went) and skill-07/
    assert second == await _cold(workspace)


async def test_created_deleted_and_ignored_skills_match_a_cold_discovery(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, count=5)
    cache = SkillCache()
    await _watched(workspace, cache)
    created = write_skill(workspace, ".claude/skills/fresh", skill_md("fresh", "New."))
    cache.invalidate(created.parent)
    catalog, opened, listed = await _watched(workspace, cache)
    assert "fresh" in catalog.names and opened.count("SKILL.md") == 1 and listed == 2
    assert catalog == await _cold(workspace)
    shutil.rmtree(workspace / ".claude/skills/skill-01")
    cache.invalidate(workspace / ".claude/skills/skill-01")
    catalog, opened, listed = await _watched(workspace, cache)
    assert "skill-01" not in catalog.names and opened.count("SKILL.md") == 0 and listed == 1
    assert catalog == await _cold(workspace)
    (workspace / ".claude/skills/skill-02/extra.txt").write_text("a new resource\n")
    cache.invalidate(workspace / ".claude/skills/skill-02/extra.txt")
    catalog, _, listed = await _watched(workspace, cache)
    assert ".claude/skills/skill-02/extra.txt" in catalog.get("skill-02").resources
    assert listed == 2 and catalog == await _cold(workspace)
    (workspace / ".gitignore").write_text(".claude/skills/skill-03/\n")
    cache.invalidate(workspace / ".gitignore")  # ignore rules changed: that directory whole
    catalog, opened, _ = await _watched(workspace, cache)
    assert "skill-03" not in catalog.names and opened.count("SKILL.md") == 4
    assert catalog == await _cold(workspace)
    (workspace / "src").mkdir()
    cache.invalidate(workspace / "src")  # nothing a skill depends on: nothing is listed
    catalog, opened, listed = await _watched(workspace, cache)
    assert listed == 0 and opened.count("SKILL.md") == 0 and catalog == await _cold(workspace)
    created = write_skill(workspace, ".agents/skills/other", skill_md("other", "Elsewhere."))
    cache.invalidate(created)  # a skills directory that was absent: scanned now
    catalog, _, _ = await _watched(workspace, cache)
    assert "other" in catalog.names and catalog == await _cold(workspace)


async def test_harness_invalidate_reaches_the_skills(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, count=3)
    with anyio.fail_after(30):
        async with Harness(extended()) as h:
            before = await h.skills(workspace)
            path = write_skill(workspace, ".claude/skills/skill-00", skill_md("skill-00", "New."))
            assert await h.skills(workspace) is before  # cached until invalidated
            h.invalidate(path)
            after = await h.skills(workspace)
    assert after.get("skill-00").description == "New." and after == await _cold(workspace)
