"""The ``cursor`` format: Cursor's project rules and its legacy ``.cursorrules``.

    >>> from harness.instruction_files.discovery.formats.cursor import CursorFormat
    >>> sorted(CursorFormat().candidates())
    ['.cursor', '.cursorrules']

Per directory: ``.cursorrules`` (applied always), then ``.cursor/rules/**/*.mdc`` by path.
A rule with ``alwaysApply: true`` applies always; one with ``globs`` (relative to the
directory holding ``.cursor/``) only when a target matches; any other rule, with or without a
``description``, and a file without frontmatter, is applied by the agent's judgement or by
hand in Cursor, so it is not a source (listed as description-only or manual).
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

__all__ = ["CursorFormat"]

LEGACY, FOLDER = ".cursorrules", ".cursor"
RULES = (FOLDER, "rules")
KNOWN = frozenset({"globs", "alwaysApply"})


def _decide(fields: Mapping[str, object]) -> Decision:
    if fields.get("alwaysApply") is True:
        return ("always", None)
    globs, _ = glob_list(fields.get("globs"))
    if globs:
        return ("paths", fields["globs"])
    if text_of(fields.get("description")):
        return ("passed", "description only: catalog")
    return ("passed", "manual: neither globs nor alwaysApply")


class CursorFormat:
    """``.cursorrules`` and ``.cursor/rules/``."""

    name = "cursor"

    def candidates(self) -> frozenset[str]:
        return frozenset({LEGACY, FOLDER})

    def visit(self, directory: Directory) -> None:
        directory.take(LEGACY, rank=0)
        if FOLDER in directory.named:
            read_rules_dir(directory, RULES, lambda name: name.endswith(".mdc"), rank=1)

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
