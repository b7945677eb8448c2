"""The values of skills: one catalog entry (``Skill``) and one activation (``SkillActivation``).

    >>> from harness.skills._model import Skill
    >>> skill = Skill("pdf", "Read PDFs.", ".claude/skills/pdf/SKILL.md", "project", "ab" * 32)
    >>> skill.entry()["location"]
    '.claude/skills/pdf/SKILL.md'

Both are frozen: a catalog is a snapshot of the skills directories when it was discovered,
and an activation is what was handed to the model, so a later trace can name exactly which
bytes a behaviour came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Kind", "Scope", "Skill", "SkillActivation", "Trigger"]

Scope = Literal["project", "user"]
Trigger = Literal["user", "model", "path"]
Kind = Literal["skill", "rule"]
"""``rule``: an agent's rule file that only judgement or a person activates (a Cursor rule
with neither globs nor alwaysApply, a Windsurf ``model_decision`` or ``manual`` rule, a
Copilot ``*.instructions.md`` without ``applyTo``), listed like a skill."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill of a catalog. ``path``: the workspace-relative ``SKILL.md`` (a user skill's
    is ``user:<directory>/...``); ``digest``: the sha256 of the ``SKILL.md`` bytes;
    ``allowed_tools`` is recorded, never granted; ``extra``: frontmatter keys outside the
    specification."""

    name: str
    description: str
    path: str
    scope: Scope
    digest: str
    allowed_tools: tuple[str, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, object] = field(default_factory=dict)
    license: str | None = None
    compatibility: str | None = None
    body: str = field(default="", repr=False)
    resources: tuple[str, ...] = ()
    kind: Kind = "skill"
    format: str | None = None  # a rule's format ("cursor", "windsurf", "copilot")
    activation: str | None = None  # a rule's way in ("description only: catalog", "manual")

    def entry(self) -> dict[str, str]:
        """What the catalog shows of the skill (and digests): name, description, location
        (and for a rule its kind, format and how it is activated)."""
        shown = {"name": self.name, "description": self.description, "location": self.path}
        if self.kind != "skill":
            shown.update(kind=self.kind, format=self.format or "", activation=self.activation or "")
        return shown

    @property
    def unit_id(self) -> str:
        """The id of its catalog entry in the ``skills`` layer (``skill:pdf``, ``rule:...``)."""
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True, slots=True)
class SkillActivation:
    """One skill handed to the model: ``body`` (the ``SKILL.md`` without its frontmatter),
    ``digest`` (sha256 of ``body``), ``resources`` (paths listed, never read) and ``tokens``
    (the body's count by the activating tokenizer), with what a manifest records of it."""

    name: str
    body: str
    digest: str
    resources: tuple[str, ...]
    tokens: int
    scope: Scope = "project"
    path: str = ""
    skill_digest: str = ""
    reason: str = ""
    trigger: Trigger = "model"
    kind: Kind = "skill"

    def record(self) -> dict[str, object]:
        """The manifest's record of this activation (JSON-serialisable)."""
        return {
            "name": self.name,
            "scope": self.scope,
            "path": self.path,
            "skill_sha256": self.skill_digest,
            "body_sha256": self.digest,
            "tokens": self.tokens,
            "trigger": self.trigger,
            "reason": self.reason,
            "resources": list(self.resources),
            **({"kind": self.kind} if self.kind != "skill" else {}),
        }
