"""Agent Skills: a budgeted catalog in the prompt, each activation on the record.

::

    from harness import EXTENDED_LAYOUT, Harness, HarnessConfig

    config = HarnessConfig(layout=EXTENDED_LAYOUT)
    async with Harness(config) as h:
        catalog = await h.skills("/srv/acme", targets=["src/report.py"])
        activation = await catalog.activate("pdf", reason="the user attached a PDF")
        prompt = await h.build_prompt(
            "/srv/acme", agent="reviewer", skills=catalog, activations=[activation]
        )

A skill is a directory holding ``SKILL.md`` (YAML frontmatter, then Markdown) under a skills
directory (``.agents/skills``, ``.claude/skills``, ``.codex/skills`` by default) of the
workspace root or of a directory on the targets' chains. The catalog puts each skill's name,
description and location in the prompt; ``activate`` gives the body, with the skill's other
files listed, never read. ``allowed-tools`` is recorded and never granted: loading a skill
adds no tool, path or permission. The parts: ``frontmatter`` (the specification's fields),
``scan`` (the bounded walk), ``cache`` (scans kept between calls, refreshed by
``invalidate(path)``), ``model`` (the values), ``catalog`` (discovery, collisions,
activation, manual rules as entries), ``units`` (the layer and the manifest's record).
"""

from __future__ import annotations

from harness.skills._cache import SkillCache
from harness.skills._catalog import SkillCatalog
from harness.skills._errors import SkillError, UnknownSkill
from harness.skills._model import Skill, SkillActivation
from harness.skills._units import skill_units, skills_record

__all__ = [
    "Skill",
    "SkillActivation",
    "SkillCache",
    "SkillCatalog",
    "SkillError",
    "UnknownSkill",
    "skill_units",
    "skills_record",
]
