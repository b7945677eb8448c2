"""The ``cursor`` format: Cursor's project rules and its legacy ``.cursorrules``.

    >>> from harness.instruction_files.discovery.formats._cursor import CursorFormat
    >>> sorted(CursorFormat().candidates())
    ['.cursor', '.cursorrules']

Per directory: ``.cursorrules`` (applied always), then ``.cursor/rules/**/*.mdc`` by path.
A rule with ``alwaysApply: true`` applies always; one with ``globs`` (relative to the
directory holding ``.cursor/``) only when a target matches; any other rule, with or without a
``description``, and a file without frontmatter, is applied by the agent's judgement or by
hand in Cursor, so it is not a source (listed as description-only or manual).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.instruction_files.discovery._globs import glob_list
from harness.instruction_files.discovery._rules import (
    Decision,
    RuleFormat,
    described_or,
)

__all__ = ["CursorFormat"]


class CursorFormat(RuleFormat):
    """``.cursorrules`` and ``.cursor/rules/``."""

    name = "cursor"
    files = (".cursorrules",)
    rules = (".cursor", "rules")
    suffix = ".mdc"
    known = frozenset({"globs", "alwaysApply"})

    def decide(self, fields: Mapping[str, object]) -> Decision:
        if fields.get("alwaysApply") is True:
            return ("always", None)
        globs, _ = glob_list(fields.get("globs"))
        if globs:
            return ("paths", fields["globs"])
        return described_or(fields, "manual: neither globs nor alwaysApply")
