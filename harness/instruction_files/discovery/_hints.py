"""Warnings about instruction files a load did not read, and how to read them.

    >>> import os, tempfile
    >>> from harness.instruction_files import InstructionFilesSettings
    >>> from harness.instruction_files.discovery._hints import other_formats
    >>> ws = tempfile.mkdtemp()
    >>> open(os.path.join(ws, "CLAUDE.md"), "w").close()
    >>> warning = other_formats(ws, InstructionFilesSettings(), ("",))
    >>> "but CLAUDE.md (claude) exists" in warning, 'formats = ["agents", "claude"]' in warning
    (True, True)

Two cases, each one warning computed with the read (a few ``lstat`` calls, no file opened):

- The configured formats found nothing, yet other formats' files exist in the workspace root
  or on the targets' chains: a repository with only ``CLAUDE.md`` would otherwise get an empty
  instruction layer and no word of why.
- The workspace lies below a project root (the nearest ancestor holding one of the
  ``project_root_markers``) and the directories from that root down to the workspace hold
  files of the configured formats: they were not read, since the workspace is the root of
  what is read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness._project_root import find_project_root
from harness.instruction_files._settings import InstructionFilesSettings

__all__ = ["FORMAT_FILES", "files_above", "other_formats"]

FORMAT_FILES: Mapping[str, tuple[str, ...]] = {
    "agents": ("AGENTS.override.md", "AGENTS.md"),
    "claude": ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules"),
    "gemini": ("GEMINI.md",),
    "copilot": (".github/copilot-instructions.md", ".github/instructions"),
    "cursor": (".cursorrules", ".cursor/rules"),
    "windsurf": (".windsurfrules", ".windsurf/rules"),
    "cline": (".clinerules",),
}
"""Per format, the paths (relative to a directory) that show it is used there."""


def _names(format: str, settings: InstructionFilesSettings) -> tuple[str, ...]:
    return settings.names if format == "agents" else FORMAT_FILES.get(format, ())


def _present(
    root: str,
    directories: Sequence[str],
    formats: Sequence[str],
    names: Callable[[str], tuple[str, ...]],
) -> list[tuple[str, str]]:
    """(path shown, format) of each format's file present in ``directories``."""
    found = []
    for directory in directories:
        base = os.path.join(root, directory) if directory else root
        for format in formats:
            for name in names(format):
                if os.path.lexists(os.path.join(base, name)):
                    found.append((f"{directory}/{name}" if directory else name, format))
    return found


def other_formats(
    root: str, settings: InstructionFilesSettings, directories: Sequence[str]
) -> str | None:
    """The warning for other formats' files in ``directories`` (workspace-relative, ``""``
    the root) of a read whose configured formats found nothing, or None."""
    configured = settings.formats
    others = [name for name in FORMAT_FILES if name not in configured]
    found = _present(root, directories, others, lambda fmt: _names(fmt, settings))
    if not found:
        return None
    listed = ", ".join(f"{path} ({fmt})" for path, fmt in found)
    wanted = [*configured, *dict.fromkeys(fmt for _, fmt in found)]
    setting = "formats = [" + ", ".join(f'"{name}"' for name in wanted) + "]"
    verb, it = ("exists", "its format") if len(found) == 1 else ("exist", "their formats")
    return (
        f"no instruction file of the configured formats ({', '.join(configured)}) was found, "
        f"but {listed} {verb}: add {it} to the formats setting ({setting}) to read "
        + ("it" if len(found) == 1 else "them")
    )


def files_above(
    root: str, settings: InstructionFilesSettings, markers: Sequence[str]
) -> str | None:
    """The warning for files of the configured formats between the project root above
    ``root`` (the workspace's real path) and ``root`` itself, which were not read; or None."""
    parent = Path(root).parent
    project = find_project_root(parent, markers=markers) if parent != Path(root) else None
    if project is None:
        return None
    here = Path(root)
    directories = [
        os.path.relpath(directory, here)
        for directory in (parent, *parent.parents)
        if directory == project or project in directory.parents
    ]
    found = _present(
        root, list(reversed(directories)), settings.formats, lambda fmt: _names(fmt, settings)
    )
    if not found:
        return None
    listed = ", ".join(path for path, _ in found)
    shown = os.path.relpath(project, here)
    return (
        f"instruction files above the workspace were not read: {listed} (the project root is "
        f"{shown}): give the project root as the workspace, with this directory as a target, "
        "to apply them"
    )
