"""The ``copilot`` format: GitHub Copilot's repository and path instructions.

    >>> from harness.instruction_files.discovery.formats.copilot import CopilotFormat
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

from collections.abc import Mapping, Sequence

from harness.instruction_files.discovery.format import Directory, Found, file_sources
from harness.instruction_files.discovery.globs import glob_list
from harness.instruction_files.discovery.rules import (
    Decision,
    read_rules_dir,
    rule_sources,
    rules_home,
    text_of,
)
from harness.instruction_files.models import InstructionSource, PassedRule
from harness.workspace.import_door import ImportDoor

__all__ = ["CopilotFormat"]

FOLDER, MAIN, SUFFIX = ".github", "copilot-instructions.md", ".instructions.md"
RULES = (FOLDER, "instructions")
KNOWN = frozenset({"applyTo", "excludeAgent"})


class CopilotFormat:
    """``.github/copilot-instructions.md`` and ``.github/instructions/``."""

    name = "copilot"

    def __init__(self, agent: str) -> None:
        self.agent = agent

    def candidates(self) -> frozenset[str]:
        return frozenset({FOLDER})

    def visit(self, directory: Directory) -> None:
        folder = directory.subdirectory(FOLDER)
        if folder is None:
            return
        try:
            folder.take(MAIN, rank=0)
        finally:
            folder.close()
        read_rules_dir(directory, RULES, lambda name: name.endswith(SUFFIX), rank=1)

    def decide(self, fields: Mapping[str, object]) -> Decision:
        excluded = [text.strip() for text in text_of(fields.get("excludeAgent")).split(",")]
        if self.agent in excluded:
            return ("passed", f"excluded for agent {self.agent}")
        globs, _ = glob_list(fields.get("applyTo"))
        if globs:
            return ("paths", fields["applyTo"])
        if text_of(fields.get("description")):
            return ("passed", "description only: catalog")
        return ("passed", "manual: no applyTo")

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        if rules_home(found.rel, RULES) is not None:
            return rule_sources(found, door, self.name, self.decide, KNOWN)
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})

    def home(self, rel: str) -> str | None:
        for parts in (RULES, (FOLDER, MAIN)):
            found = rules_home(rel, parts)
            if found is not None:
                return found
        return None
