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

from harness.instruction_files.discovery._rules import Decision, RuleFormat, paths_or

__all__ = ["ClaudeFormat"]


class ClaudeFormat(RuleFormat):
    """``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/rules/``."""

    name = "claude"
    files = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
    local = frozenset({"CLAUDE.local.md"})
    rules = (".claude", "rules")
    known = frozenset({"paths"})

    def decide(self, fields: Mapping[str, object]) -> Decision:
        return paths_or(fields, "paths")
