"""The instruction formats a walk can read, by name: one module each, one entry here.

    >>> from harness.instruction_files import InstructionFilesSettings
    >>> from harness.instruction_files.discovery.formats import formats_for
    >>> [fmt.name for fmt in formats_for(InstructionFilesSettings())]
    ['agents']

``FORMATS`` maps a format's name to the function that builds it from the settings; the seam
itself (what a format answers) is ``harness.instruction_files.discovery._format``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from harness.errors import ArgumentError
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._format import InstructionFormat
from harness.instruction_files.discovery.formats._agents import AgentsFormat
from harness.instruction_files.discovery.formats._claude import ClaudeFormat
from harness.instruction_files.discovery.formats._cline import ClineFormat
from harness.instruction_files.discovery.formats._copilot import CopilotFormat
from harness.instruction_files.discovery.formats._cursor import CursorFormat
from harness.instruction_files.discovery.formats._gemini import GeminiFormat
from harness.instruction_files.discovery.formats._windsurf import WindsurfFormat

__all__ = ["FORMATS", "check_formats", "formats_for"]

FORMATS: Mapping[str, Callable[[InstructionFilesSettings], InstructionFormat]] = {
    "agents": lambda settings: AgentsFormat(settings.names),
    "claude": lambda settings: ClaudeFormat(),
    "gemini": lambda settings: GeminiFormat(),
    "copilot": lambda settings: CopilotFormat(settings.copilot_agent),
    "cursor": lambda settings: CursorFormat(),
    "windsurf": lambda settings: WindsurfFormat(),
    "cline": lambda settings: ClineFormat(),
}


def check_formats(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` if every one is a known format, else ``ArgumentError`` naming them."""
    unknown = [name for name in names if name not in FORMATS]
    if unknown:
        known = ", ".join(repr(name) for name in FORMATS)
        raise ArgumentError(f"unknown instruction format {unknown[0]!r}: use one of {known}")
    return names


def formats_for(settings: InstructionFilesSettings) -> tuple[InstructionFormat, ...]:
    """The formats ``settings`` configure, in precedence order (the first is the least
    authoritative within one directory)."""
    return tuple(FORMATS[name](settings) for name in check_formats(settings.formats))
