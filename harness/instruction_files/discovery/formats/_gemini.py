"""The ``gemini`` format: Gemini CLI's ``GEMINI.md`` context file, in any directory.

    >>> from harness.instruction_files.discovery.formats._gemini import GeminiFormat
    >>> sorted(GeminiFormat().candidates())
    ['GEMINI.md']

One file per directory, read whole and applied always, with every rule of the walk (as the
``agents`` format's files). Imports are the whole-line ``@path`` of every format.
"""

from __future__ import annotations

from harness.instruction_files.discovery._rules import RuleFormat

__all__ = ["GeminiFormat"]


class GeminiFormat(RuleFormat):
    """``GEMINI.md`` in any directory."""

    name = "gemini"
    files = ("GEMINI.md",)
