"""The ``claude`` format: Claude Code's memory files and path rules, in any directory.

    >>> from harness.instruction_files.discovery.formats._claude import ClaudeFormat
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

from collections.abc import Mapping

from harness.instruction_files.discovery._format import Directory
from harness.instruction_files.discovery._rules import (
    Decision,
    RuleFormat,
    paths_or,
    read_rules_dir,
    take_inside,
)

__all__ = ["ClaudeFormat"]

SHARED, LOCAL, FOLDER = "CLAUDE.md", "CLAUDE.local.md", ".claude"


class ClaudeFormat(RuleFormat):
    """``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/rules/``."""

    name = "claude"
    rules = (FOLDER, "rules")
    singles = ((FOLDER, SHARED),)
    known = frozenset({"paths"})

    def candidates(self) -> frozenset[str]:
        return frozenset({SHARED, LOCAL, FOLDER})

    def visit(self, directory: Directory) -> None:
        directory.take(SHARED, rank=0)
        directory.take(LOCAL, rank=2, local=True)
        if take_inside(directory, FOLDER, SHARED, rank=1):
            read_rules_dir(directory, self.rules, lambda name: name.endswith(".md"), rank=3)

    def decide(self, fields: Mapping[str, object]) -> Decision:
        return paths_or(fields, "paths")
