"""The errors of skills: a catalog that breaks the specification, a name that is not in it.

::

    from harness import SkillError, UnknownSkill

    try:
        activation = await catalog.activate("pdf", reason="the user attached a PDF")
    except UnknownSkill as exc:
        print(exc)          # unknown skill 'pdf'; the catalog has: docx, xlsx
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import HarnessError

__all__ = ["SkillError", "UnknownSkill"]


class SkillError(HarnessError, ValueError):
    """Skills that break the Agent Skills specification (``strict=True``): ``problems`` lists
    every one, each naming its ``SKILL.md``."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        listed = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(
            f"{len(self.problems)} skill problem(s) under the Agent Skills specification "
            f"(fix them, or discover with strict=False to load with warnings):\n{listed}"
        )


class UnknownSkill(HarnessError, KeyError):
    """A skill name that is not in the catalog; the message lists the names it has."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = tuple(known)
        listed = ", ".join(self.known) if self.known else "(the catalog is empty)"
        self.message = f"unknown skill {name!r}; the catalog has: {listed}"
        super().__init__(self.message)

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return self.message
