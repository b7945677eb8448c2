"""The ``cline`` format: Cline's ``.clinerules``, a file or a directory of ``.md`` files.

    >>> from harness.instruction_files.discovery.formats.cline import ClineFormat
    >>> sorted(ClineFormat().candidates())
    ['.clinerules']

Per directory: ``.clinerules`` as a file (applied always), or as a directory whose ``*.md``
files are read by path. A rule with ``paths:`` in its frontmatter (relative to the directory
holding ``.clinerules``) applies only when a target matches; every other one always.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.instruction_files.discovery.format import Directory, Found, file_sources
from harness.instruction_files.discovery.rules import (
    Decision,
    paths_or,
    read_rules_dir,
    rule_sources,
    rules_home,
)
from harness.instruction_files.models import InstructionSource, PassedRule
from harness.workspace.import_door import ImportDoor

__all__ = ["ClineFormat"]

NAME = ".clinerules"
RULES = (NAME,)


def _decide(fields: Mapping[str, object]) -> Decision:
    return paths_or(fields, "paths")


class ClineFormat:
    """``.clinerules`` (file) or ``.clinerules/*.md``."""

    name = "cline"

    def candidates(self) -> frozenset[str]:
        return frozenset({NAME})

    def visit(self, directory: Directory) -> None:
        entry = directory.named.get(NAME)
        if entry is None:
            return
        if entry.is_dir(follow_symlinks=False):
            accept = lambda name: name.endswith(".md")  # noqa: E731
            read_rules_dir(directory, RULES, accept, rank=1, recursive=False)
        else:
            directory.take(NAME, rank=0)

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        if found.home is not None:  # a file of the .clinerules directory
            return rule_sources(found, door, self.name, _decide, frozenset({"paths"}))
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})

    def home(self, rel: str) -> str | None:
        home = rules_home(rel, RULES)
        return None if home is None or rel.endswith(NAME) else home
