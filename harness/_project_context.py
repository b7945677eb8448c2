"""The project_context layer: the workspace's ``.AGENTS/`` directory, read safely, as units.

    >>> import os, tempfile
    >>> from harness._project_context import load_project_context
    >>> ws = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(ws, ".AGENTS"))
    >>> for name in ("glossary.md", "overview.md"):
    ...     with open(os.path.join(ws, ".AGENTS", name), "w") as out:
    ...         _ = out.write(f"{name} text\\n")
    >>> [unit.id for unit in load_project_context(ws).units]
    ['.AGENTS/overview.md', '.AGENTS/glossary.md']

The layer's files are the sources of the formats feeding it (the ``project_context`` format
reads ``.AGENTS/``: which files, in which order, and the rules it reads them under are its
module's, ``harness.instruction_files.discovery.formats._project_context``), read at the
workspace root by ``harness.instruction_files.discovery.read_root``. Each source becomes one
``Unit`` whose id and source are its workspace-relative path, so the rendered prompt cites it
and the report names it. A workspace without ``.AGENTS/`` simply has an empty layer: opting
in is optional. Every warning is one printable line; nothing here raises for content.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from harness.errors import ArgumentError
from harness.instruction_files.discovery import read_root
from harness.instruction_files.discovery.formats import layer_formats
from harness.instruction_files.discovery.formats._project_context import (
    DIRECTORY,
    LAYER,
    PRIORITY,
)
from harness.prompt_assembler import Unit
from harness.workspace import printable, reason
from harness.workspace._vendored import DEFAULT_VENDORED
from harness.workspace.deny import DEFAULT_DENY_READ, DenyRules

__all__ = ["DIRECTORY", "PRIORITY", "ProjectContext", "load_project_context"]


@dataclass(frozen=True, slots=True)
class ProjectContext:
    """The ``.AGENTS/`` units in layer order, and why any file was skipped or altered.

    ``imports`` maps the id of each unit that has ``@path`` imports to what it imported
    (workspace-relative path, sha256), as ``InstructionSource.imports``.
    """

    units: tuple[Unit, ...] = ()
    warnings: tuple[str, ...] = ()
    imports: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


def load_project_context(
    workspace: str | os.PathLike[str],
    *,
    max_file_bytes: int = 65536,
    vendored: Iterable[str] | None = None,
    deny_read: Iterable[str] | None = None,
    stop: threading.Event | None = None,
) -> ProjectContext:
    """Read ``WORKSPACE/.AGENTS/*.md`` into units (blocking I/O: run it in a worker thread).

    ``vendored`` are the directory names a symlink may not point into (besides ``.git``);
    default: ``harness.workspace._vendored.DEFAULT_VENDORED``. ``Harness`` passes its config's. Once
    ``stop`` is set (from another thread) the read raises ``WalkCancelled`` soon after.
    ``deny_read``: ``.gitignore`` patterns of paths never opened (a ``.AGENTS/`` file, an
    import, a symlink's target); default ``harness.workspace.deny.DEFAULT_DENY_READ``.
    """
    if max_file_bytes < 1:
        raise ArgumentError("max_file_bytes must be at least 1")
    root = os.path.realpath(workspace)
    prune = DEFAULT_VENDORED if vendored is None else vendored
    try:
        deny = DenyRules(DEFAULT_DENY_READ if deny_read is None else deny_read)
        formats = layer_formats(LAYER)
        sources, warnings = read_root(
            root, formats, cap=max_file_bytes, vendored=prune, deny=deny, stop=stop
        )
    except FileNotFoundError:
        return ProjectContext()
    except OSError as exc:
        problem = printable(f"{DIRECTORY}/: cannot be read ({reason(exc)}); skipped")
        return ProjectContext((), (problem,), {})
    units = tuple(
        Unit(
            id=source.path,
            text=source.content,
            source=source.path,
            version=source.revision,
            observed_at=datetime.now(UTC),
        )
        for source in sources
    )
    imports = {source.path: source.imports for source in sources if source.imports}
    return ProjectContext(units, tuple(warnings), imports)
