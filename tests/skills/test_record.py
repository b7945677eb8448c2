"""A build with skills on the record: the SQLite store keeps the catalog's digest and every
activation, and replay rebuilds the prompt byte for byte."""

from __future__ import annotations

from pathlib import Path

import anyio

from harness import Harness, SkillCatalog
from harness.manifests import ManifestStore
from tests.skills.support import extended, real_workspace, skill_md, write_skill


async def test_a_recorded_build_with_skills_replays_byte_identical(tmp_path: Path) -> None:
    workspace = real_workspace(tmp_path)
    write_skill(workspace, ".claude/skills/alpha", skill_md("alpha", "Alpha.", body="Do alpha."))
    (workspace / ".claude/skills/alpha/notes.txt").write_text("listed, never read\n")
    store = tmp_path / "manifests.db"
    with anyio.fail_after(60):
        catalog = await SkillCatalog.discover(workspace)
        alpha = await catalog.activate("alpha", reason="the user asked for alpha", trigger="user")
        comms = await catalog.activate("internal-comms", reason="a status report")
        async with Harness(extended(), manifests=store) as h:
            prompt = await h.build_prompt(
                workspace, agent="reviewer", skills=catalog, activations=[alpha, comms]
            )
        async with ManifestStore.open(store) as manifests:
            recorded = await manifests.get(prompt.manifest_id or "")
            replay = await manifests.replay(prompt.manifest_id or "")
    skills = recorded["skills"]
    assert skills["catalog_digest"] == catalog.digest
    assert [entry["name"] for entry in skills["catalog"]] == [s.name for s in catalog.skills]
    first, second = skills["activations"]
    assert first == {
        "name": "alpha",
        "scope": "project",
        "path": ".claude/skills/alpha/SKILL.md",
        "skill_sha256": catalog.get("alpha").digest,
        "body_sha256": alpha.digest,
        "tokens": alpha.tokens,
        "trigger": "user",
        "reason": "the user asked for alpha",
        "resources": [".claude/skills/alpha/notes.txt"],
    }
    assert second["name"] == "internal-comms" and second["trigger"] == "model"
    assert replay.identical, replay.differences
    assert replay.prompt is not None
    assert replay.prompt.text.encode() == prompt.text.encode()
    assert "skill alpha (activated)" in replay.prompt.text
