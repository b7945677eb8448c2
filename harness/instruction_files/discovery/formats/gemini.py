"""The ``gemini`` format: Gemini CLI's ``GEMINI.md`` context file, in any directory.

    >>> from harness.instruction_files.discovery.formats.gemini import GeminiFormat
    >>> sorted(GeminiFormat().candidates())
    ['GEMINI.md']

One file per directory, read whole and applied always, with every rule of the walk (as the
``agents`` format's files). Imports are the whole-line ``@path`` of every format.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.instruction_files.discovery.format import Directory, Found, file_sources
from harness.instruction_files.models import InstructionSource, PassedRule
from harness.workspace.import_door import ImportDoor

__all__ = ["GeminiFormat"]

NAME = "GEMINI.md"


class GeminiFormat:
    """``GEMINI.md`` in any directory."""

    name = "gemini"

    def candidates(self) -> frozenset[str]:
        return frozenset({NAME})

    def visit(self, directory: Directory) -> None:
        directory.take(NAME)

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})

    def home(self, rel: str) -> str | None:
        return None
