"""The ``claude`` format: Claude Code's ``CLAUDE.md`` and ``CLAUDE.local.md``, in any directory.

    >>> from harness.instruction_files.discovery.formats.claude import ClaudeFormat
    >>> sorted(ClaudeFormat().candidates())
    ['CLAUDE.local.md', 'CLAUDE.md']

Both files of a directory are read (Claude Code reads both), ``CLAUDE.md`` first:
``CLAUDE.local.md`` is the more authoritative, personal one. ``CLAUDE.local.md`` is meant to
stay out of git, so, as Claude Code does, it is read even when an ignore rule lists it, but
never inside an ignored or vendored directory. Every other rule of the walk holds (regular
files only, the symlink policy, the byte cap, the encoding, one file by two paths read once).

Not read yet: ``.claude/CLAUDE.md`` and ``.claude/rules/**/*.md`` (path rules). Imports are
the whole-line ``@path`` of every format.
"""

from __future__ import annotations

from harness.instruction_files.discovery.format import Directory, Found, file_sources
from harness.instruction_files.models import InstructionSource
from harness.workspace.import_door import ImportDoor

__all__ = ["ClaudeFormat"]

SHARED, LOCAL = "CLAUDE.md", "CLAUDE.local.md"


class ClaudeFormat:
    """``CLAUDE.md`` then ``CLAUDE.local.md``, each read when present."""

    name = "claude"

    def candidates(self) -> frozenset[str]:
        return frozenset({SHARED, LOCAL})

    def visit(self, directory: Directory) -> None:
        directory.take(SHARED, rank=0)
        directory.take(LOCAL, rank=2, local=True)  # (rank 1: .claude/CLAUDE.md, later)

    def sources(self, found: Found, door: ImportDoor) -> tuple[list[InstructionSource], list[str]]:
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})
