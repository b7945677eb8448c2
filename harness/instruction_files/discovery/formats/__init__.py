"""The formats a workspace is read in, by name: one module each, one entry here.

    >>> from harness.instruction_files import InstructionFilesSettings
    >>> from harness.instruction_files.discovery.formats import formats_for, layer_formats
    >>> [fmt.name for fmt in formats_for(InstructionFilesSettings())]
    ['agents']
    >>> [(fmt.name, fmt.layer) for fmt in layer_formats("project_context")]
    [('project_context', 'project_context')]

``FORMATS`` maps a format's name to the function that builds it from the settings; the seam
itself (what a format answers) is ``harness.instruction_files.discovery._format``. A format
feeds the prompt layer its ``layer`` names: the instruction layer's formats are the ones the
``formats`` setting chooses, read by the walk of every directory; a format of another layer
(``project_context``: ``.AGENTS/``) is read by every build, at the workspace root.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from harness.errors import ArgumentError
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._format import INSTRUCTIONS, InstructionFormat, layer_of
from harness.instruction_files.discovery.formats._agents import AgentsFormat
from harness.instruction_files.discovery.formats._claude import ClaudeFormat
from harness.instruction_files.discovery.formats._cline import ClineFormat
from harness.instruction_files.discovery.formats._copilot import CopilotFormat
from harness.instruction_files.discovery.formats._cursor import CursorFormat
from harness.instruction_files.discovery.formats._gemini import GeminiFormat
from harness.instruction_files.discovery.formats._project_context import ProjectContextFormat
from harness.instruction_files.discovery.formats._windsurf import WindsurfFormat

__all__ = ["FORMATS", "check_formats", "formats_for", "layer_formats", "layers"]

FORMATS: Mapping[str, Callable[[InstructionFilesSettings], InstructionFormat]] = {
    "agents": lambda settings: AgentsFormat(settings.names),
    "claude": lambda settings: ClaudeFormat(),
    "gemini": lambda settings: GeminiFormat(),
    "copilot": lambda settings: CopilotFormat(settings.copilot_agent),
    "cursor": lambda settings: CursorFormat(),
    "windsurf": lambda settings: WindsurfFormat(),
    "cline": lambda settings: ClineFormat(),
    "project_context": lambda settings: ProjectContextFormat(),
}


def layers(settings: InstructionFilesSettings | None = None) -> dict[str, str]:
    """Each registered format's name and the layer it feeds, in registry order."""
    given = settings if settings is not None else InstructionFilesSettings()
    return {name: layer_of(make(given)) for name, make in FORMATS.items()}


def layer_formats(
    layer: str, settings: InstructionFilesSettings | None = None
) -> tuple[InstructionFormat, ...]:
    """Every registered format feeding ``layer`` (a layer other than the instruction files:
    those are configured, ``formats_for``), in registry order."""
    given = settings if settings is not None else InstructionFilesSettings()
    built = (make(given) for make in FORMATS.values())
    return tuple(fmt for fmt in built if layer_of(fmt) == layer)


def check_formats(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` if every one is a known instruction format, else ``ArgumentError`` naming
    them (a format of another layer is read by every build: it is not chosen)."""
    fed = layers()
    known = ", ".join(repr(name) for name, layer in fed.items() if layer == INSTRUCTIONS)
    for name in names:
        if name not in fed:
            raise ArgumentError(f"unknown instruction format {name!r}: use one of {known}")
        if fed[name] != INSTRUCTIONS:
            raise ArgumentError(
                f"format {name!r} feeds the {fed[name]} layer, which every build reads: "
                f"leave it out of formats (instruction formats: {known})"
            )
    return names


def formats_for(settings: InstructionFilesSettings) -> tuple[InstructionFormat, ...]:
    """The formats ``settings`` configure, in precedence order (the first is the least
    authoritative within one directory)."""
    return tuple(FORMATS[name](settings) for name in check_formats(settings.formats))
