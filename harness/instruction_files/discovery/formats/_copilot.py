"""The ``copilot`` format: GitHub Copilot's repository and path instructions.

    >>> from harness.instruction_files.discovery.formats._copilot import CopilotFormat
    >>> sorted(CopilotFormat("coding-agent").candidates())
    ['.github']

Per directory holding a ``.github/``: ``.github/copilot-instructions.md`` (applied always),
then ``.github/instructions/**/*.instructions.md`` by path. An instructions file applies
only when a target matches its ``applyTo`` globs (relative to the directory holding
``.github/``); one without ``applyTo`` is never applied by Copilot on its own, so it is not a
source (listed as description-only or manual). ``excludeAgent`` names Copilot's agent kinds
(``code-review``, ``coding-agent``); a file excluding the kind this engine is (the
``copilot_agent`` setting) is not a source either.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.instruction_files.discovery._globs import glob_list
from harness.instruction_files.discovery._rules import (
    Decision,
    RuleFormat,
    described_or,
    text_of,
)

__all__ = ["CopilotFormat"]


class CopilotFormat(RuleFormat):
    """``.github/copilot-instructions.md`` and ``.github/instructions/``."""

    name = "copilot"
    files = (".github/copilot-instructions.md",)
    rules = (".github", "instructions")
    suffix = ".instructions.md"
    known = frozenset({"applyTo", "excludeAgent"})

    def __init__(self, agent: str) -> None:
        self.agent = agent

    def decide(self, fields: Mapping[str, object]) -> Decision:
        excluded = [text.strip() for text in text_of(fields.get("excludeAgent")).split(",")]
        if self.agent in excluded:
            return ("passed", f"excluded for agent {self.agent}")
        globs, _ = glob_list(fields.get("applyTo"))
        if globs:
            return ("paths", fields["applyTo"])
        return described_or(fields, "manual: no applyTo")
