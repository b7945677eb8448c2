"""The ``windsurf`` format: Windsurf's workspace rules and its legacy ``.windsurfrules``.

    >>> from harness.instruction_files.discovery.formats.windsurf import WindsurfFormat
    >>> sorted(WindsurfFormat().candidates())
    ['.windsurf', '.windsurfrules']

Per directory: ``.windsurfrules`` (applied always), then ``.windsurf/rules/*.md`` by path.
A rule's ``trigger`` decides: ``glob`` applies it when a target matches its ``globs``
(relative to the directory holding ``.windsurf/``); ``model_decision`` (the agent judges by
its description) and ``manual`` are not sources (listed); ``always_on``, or no trigger,
applies always.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.instruction_files.discovery.format import Directory, Found, file_sources
from harness.instruction_files.discovery.rules import (
    Decision,
    read_rules_dir,
    rule_sources,
    rules_home,
    text_of,
)
from harness.instruction_files.models import InstructionSource, PassedRule
from harness.workspace.import_door import ImportDoor

__all__ = ["WindsurfFormat"]

LEGACY, FOLDER = ".windsurfrules", ".windsurf"
RULES = (FOLDER, "rules")
KNOWN = frozenset({"trigger", "globs"})


def _decide(fields: Mapping[str, object]) -> Decision:
    trigger = text_of(fields.get("trigger"))
    if trigger == "glob":
        return ("paths", fields.get("globs"))
    if trigger == "model_decision":
        return ("passed", "description only: catalog")
    if trigger == "manual":
        return ("passed", "manual")
    return ("always", None)


class WindsurfFormat:
    """``.windsurfrules`` and ``.windsurf/rules/``."""

    name = "windsurf"

    def candidates(self) -> frozenset[str]:
        return frozenset({LEGACY, FOLDER})

    def visit(self, directory: Directory) -> None:
        directory.take(LEGACY, rank=0)
        if FOLDER in directory.named:
            accept = lambda name: name.endswith(".md")  # noqa: E731
            read_rules_dir(directory, RULES, accept, rank=1, recursive=False)

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        if rules_home(found.rel, RULES) is not None:
            return rule_sources(found, door, self.name, _decide, KNOWN)
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})

    def home(self, rel: str) -> str | None:
        return rules_home(rel, RULES)
