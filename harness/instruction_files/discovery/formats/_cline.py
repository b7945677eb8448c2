"""The ``cline`` format: Cline's ``.clinerules``, a file or a directory of ``.md`` files.

    >>> from harness.instruction_files.discovery.formats._cline import ClineFormat
    >>> sorted(ClineFormat().candidates())
    ['.clinerules']

Per directory: ``.clinerules`` as a file (applied always), or as a directory whose ``*.md``
files are read by path. A rule with ``paths:`` in its frontmatter (relative to the directory
holding ``.clinerules``) applies only when a target matches; every other one always.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.instruction_files.discovery._format import Directory
from harness.instruction_files.discovery._rules import (
    Decision,
    RuleFormat,
    paths_or,
    read_rules_dir,
    rules_home,
)

__all__ = ["ClineFormat"]

NAME = ".clinerules"


class ClineFormat(RuleFormat):
    """``.clinerules`` (file) or ``.clinerules/*.md``."""

    name = "cline"
    rules = (NAME,)
    known = frozenset({"paths"})

    def candidates(self) -> frozenset[str]:
        return frozenset({NAME})

    def visit(self, directory: Directory) -> None:
        entry = directory.named.get(NAME)
        if entry is None:
            return
        if entry.is_dir(follow_symlinks=False):
            accept = lambda name: name.endswith(".md")  # noqa: E731
            read_rules_dir(directory, self.rules, accept, rank=1, recursive=False)
        else:
            directory.take(NAME, rank=0)

    def decide(self, fields: Mapping[str, object]) -> Decision:
        return paths_or(fields, "paths")

    def home(self, rel: str) -> str | None:
        home = rules_home(rel, self.rules)
        return None if home is None or rel.endswith(NAME) else home
