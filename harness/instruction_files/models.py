"""The values ``InstructionFiles.load`` returns, and the errors it raises.

::

    found = await files.load("examples/acme", agent="reviewer")   # an InstructionSet
    for source in found:                                          # ascending precedence
        print(source.kind, source.path, source.digest[:8])
    print(found.warnings)                                         # what was skipped, and why

Sources and sets are frozen so a cached set can be handed to many callers at once: nobody can
change what another caller was given.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from harness.errors import HarnessError
from harness.workspace.paths import WorkspaceNotFoundError

__all__ = [
    "InstructionSet",
    "InstructionSource",
    "InstructionStoreError",
    "SourceKind",
    "Trigger",
    "WorkspaceNotFoundError",
]

SourceKind = Literal["root", "directory", "database"]
Trigger = Literal["always", "paths"]


@dataclass(frozen=True, slots=True)
class InstructionSource:
    """One instruction file (or the agent's database row), as read.

    ``path`` is workspace-relative POSIX (``"AGENTS.md"``, ``"pkg/api/AGENTS.md"``) or
    ``"db:<project_id>/<agent>"``. ``digest`` is the sha256 hex of the bytes read (the UTF-8
    encoding of the row for the database). ``depth`` counts directories below the workspace
    root: 0 for the root file; the database source also has depth 0 (it is not in the tree;
    its place, last, comes from its kind). ``imports`` lists each file its ``@path`` lines
    imported (workspace-relative path, sha256 of its text), in first-import order; their
    text is inside ``content`` (one source, one unit), and ``digest`` stays the file's own.

    ``version`` is the source's revision for provenance: the row's ``updated_at`` for the
    database, the ``digest`` for a file (the default when none is given), or for a file with
    imports a sha256 over its digest and its imports' (an edited import is a new revision).

    ``format`` names the rule format that read the file (``"agents"``, ``"claude"``) or is
    ``"database"`` for the row. ``trigger`` is ``"always"`` for every source a load returns
    today (a rule that applies only to paths matching its ``globs`` would be ``"paths"``).
    """

    kind: SourceKind
    path: str
    content: str
    digest: str
    depth: int
    version: str | None = None
    imports: tuple[tuple[str, str], ...] = ()
    format: str = "agents"
    trigger: Trigger = "always"
    globs: tuple[str, ...] = ()

    @property
    def revision(self) -> str:
        """``version`` when known, else the ``digest``: what a manifest records."""
        return self.version if self.version is not None else self.digest


@dataclass(frozen=True, slots=True)
class InstructionSet:
    """The sources in ASCENDING precedence (root, directories shallow to deep, database last).

    Iterating yields the sources. ``warnings`` names every file skipped or altered and why,
    one ``"<path>: <reason>"`` string each, sorted by path. ``observed_at`` is when the read
    began (timezone-aware UTC; a cached set keeps the time it was read, not served).

    A scoped load (``targets=``) records its ``targets`` as given, normalised and
    workspace-relative (``"."`` is the root, no trailing ``/``, duplicates once), and
    ``chain``: the directories on their chains, root (``"."``) first, shallow to deep, ties
    by path (ignored or vendored ones among them contribute nothing). Both are empty for the
    full walk.
    """

    sources: tuple[InstructionSource, ...] = ()
    warnings: tuple[str, ...] = ()
    observed_at: datetime | None = field(default=None, compare=False)  # not part of the data
    targets: tuple[str, ...] = ()
    chain: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[InstructionSource]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


class InstructionStoreError(HarnessError):
    """The ``agent_instructions`` table could not be read; the message says what to do.

    Raised to the caller of ``load`` only: the cache task and the supervision tree are not
    affected, and nothing is cached, so the next ``load`` reads again.
    """
