"""Rules only judgement or a person activates (Cursor rules with neither globs nor
alwaysApply, Windsurf ``model_decision`` / ``manual``, Copilot ``*.instructions.md`` without
``applyTo``) are catalog entries of kind ``rule``: rendered like a skill's, activatable."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from harness import Harness, SkillCatalog, UnknownSkill
from tests.skills.support import extended, skill_md, write_skill

FORMATS = ["agents", "cursor", "windsurf", "copilot"]


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    write_skill(workspace, ".claude/skills/pdf", skill_md("pdf", "Read PDFs."))
    files = {
        ".cursor/rules/db.mdc": "---\ndescription: Database migrations\n---\nUse alembic.\n",
        ".cursor/rules/plain.mdc": "Manual rule, no frontmatter.\n",
        ".cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts\n---\nStrict mode.\n",
        ".windsurf/rules/judge.md": "---\ntrigger: model_decision\ndescription: Release "
        "checklist\n---\nTag, then publish.\n",
        ".windsurf/rules/always.md": "---\ntrigger: always_on\n---\nBe brief.\n",
        ".github/instructions/review.instructions.md": "---\ndescription: Reviews\n---\nBe kind.\n",
    }
    for rel, text in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    return workspace


async def test_manual_rules_are_catalog_entries_and_activate(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    with anyio.fail_after(60):
        async with Harness(extended(formats=FORMATS)) as h:
            catalog = await h.skills(workspace)
            rules = {skill.name: skill for skill in catalog.skills if skill.kind == "rule"}
            assert set(rules) == {
                ".cursor/rules/db.mdc",
                ".cursor/rules/plain.mdc",
                ".windsurf/rules/judge.md",
                ".github/instructions/review.instructions.md",
            }  # the glob rule and the always-on rule are instruction sources, not entries
            db = rules[".cursor/rules/db.mdc"]
            assert (db.format, db.activation, db.description) == (
                "cursor",
                "description only: catalog",
                "Database migrations",
            )
            activation = await catalog.activate(db.name, reason="a migration is due")
            assert activation.body == "Use alembic." and activation.kind == "rule"
            build = await h.build(
                workspace, agent="reviewer", skills=catalog, activations=[activation]
            )
    layer = next(layer for layer in build.prompt.layers if layer.name == "skills")
    assert "rule:.windsurf/rules/judge.md" in layer.kept and "skill:pdf" in layer.kept
    assert "rule: .cursor/rules/db.mdc\ndescription: Database migrations\n" in layer.text
    assert "format: cursor (description only: catalog)" in layer.text
    assert "rule .cursor/rules/db.mdc (activated)\n\nUse alembic." in layer.text
    assert "Tag, then publish." not in layer.text  # listed, not loaded
    record = build.context()["skills"]
    assert isinstance(record, dict)
    [recorded] = record["activations"]
    assert recorded["kind"] == "rule" and recorded["skill_sha256"] == db.digest
    kinds = {entry["name"]: entry["kind"] for entry in record["catalog"]}
    assert kinds["pdf"] == "skill" and kinds[".cursor/rules/plain.mdc"] == "rule"


async def test_without_those_formats_no_rule_entries(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    with anyio.fail_after(60):
        async with Harness(extended()) as h:
            catalog = await h.skills(workspace)
    assert catalog.names == ("pdf",)
    with pytest.raises(UnknownSkill):
        await catalog.activate(".cursor/rules/db.mdc", reason="x")
    assert SkillCatalog().with_rules(()) == SkillCatalog()
