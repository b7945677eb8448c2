"""The ``claude`` format: Claude Code's memory files and path rules, in any directory.

    >>> from harness.instruction_files.discovery.formats.claude import ClaudeFormat
    >>> sorted(ClaudeFormat().candidates())
    ['.claude', 'CLAUDE.local.md', 'CLAUDE.md']

Per directory, in ascending precedence: ``CLAUDE.md``, ``.claude/CLAUDE.md``,
``CLAUDE.local.md`` (the personal one), then the rules of ``.claude/rules/**/*.md`` by path.
A rule with ``paths:`` in its frontmatter (a list, or a string of comma-separated globs,
relative to the directory holding ``.claude/``) applies only when a target matches; every
other file applies always. ``CLAUDE.local.md`` is meant to stay out of git, so, as Claude
Code does, it is read even when an ignore rule lists it, but never inside an ignored or
vendored directory. Every other rule of the walk holds (regular files only, the symlink
policy, the byte cap, the encoding, one file by two paths read once). Imports are the
whole-line ``@path`` of every format.
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

__all__ = ["ClaudeFormat"]

SHARED, LOCAL, FOLDER = "CLAUDE.md", "CLAUDE.local.md", ".claude"
RULES = (FOLDER, "rules")


def _decide(fields: Mapping[str, object]) -> Decision:
    return paths_or(fields, "paths")


class ClaudeFormat:
    """``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/rules/``."""

    name = "claude"

    def candidates(self) -> frozenset[str]:
        return frozenset({SHARED, LOCAL, FOLDER})

    def visit(self, directory: Directory) -> None:
        directory.take(SHARED, rank=0)
        directory.take(LOCAL, rank=2, local=True)
        if FOLDER in directory.named:
            folder = directory.subdirectory(FOLDER)
            if folder is not None:
                try:
                    folder.take(SHARED, rank=1)
                finally:
                    folder.close()
            read_rules_dir(directory, RULES, lambda name: name.endswith(".md"), rank=3)

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        if rules_home(found.rel, RULES) is not None:
            return rule_sources(found, door, self.name, _decide, frozenset({"paths"}))
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})

    def home(self, rel: str) -> str | None:
        for parts in (RULES, (FOLDER, SHARED)):
            found = rules_home(rel, parts)
            if found is not None:
                return found
        return None
