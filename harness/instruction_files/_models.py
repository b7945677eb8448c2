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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from harness.errors import HarnessError
from harness.workspace._paths import WorkspaceNotFoundError

__all__ = [
    "InstructionSet",
    "InstructionSource",
    "InstructionStoreError",
    "PassedRule",
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

    ``format`` names the rule format that read the file (``"agents"``, ``"claude"``,
    ``"cursor"``, ...) or is ``"database"`` for the row. ``trigger`` is ``"always"``, or
    ``"paths"`` for a rule that applies only when a target matches one of its ``globs``
    (workspace-relative: a rule's globs are relative to the directory that scopes it, which
    is prefixed). ``metadata``: the frontmatter keys the format does not interpret, as read
    (the frontmatter itself is never part of ``content``).
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
    metadata: Mapping[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def revision(self) -> str:
        """``version`` when known, else the ``digest``: what a manifest records."""
        return self.version if self.version is not None else self.digest


@dataclass(frozen=True, slots=True)
class PassedRule:
    """A rule file read but not an instruction source: one only an agent's judgement or a
    person activates (``reason`` ``"description only: catalog"``, ``"manual"``) or one
    excluded for this agent kind (``"excluded for agent coding-agent"``). ``description``:
    what its frontmatter says it is for (empty if nothing); ``body``: its text without the
    frontmatter, and ``digest`` the sha256 of the file (what a skills catalog entry of it
    shows and activates)."""

    path: str
    format: str
    reason: str
    description: str = ""
    body: str = field(default="", repr=False, compare=False)
    digest: str = field(default="", compare=False)


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
    full walk. A rule with path globs is among the ``sources`` only when one of the
    ``targets`` matches one of them (so never in a load without targets). ``passed``: the
    rule files read that are not sources (manual and description-only rules, rules excluded
    for this agent), in path order. ``local``: the paths of the sources that are local
    files (``AGENTS.override.md``, ``CLAUDE.local.md``) read although an ignore rule lists
    them, as Codex and Claude Code read them. ``unmatched``: the path rules no target
    matches (left out of ``sources``); ``shadowed``: (file, the file chosen over it in its
    directory, e.g. ``AGENTS.md`` and ``AGENTS.override.md``) for each file that went unread
    that way.
    """

    sources: tuple[InstructionSource, ...] = ()
    warnings: tuple[str, ...] = ()
    observed_at: datetime | None = field(default=None, compare=False)  # not part of the data
    targets: tuple[str, ...] = ()
    chain: tuple[str, ...] = ()
    passed: tuple[PassedRule, ...] = ()
    local: tuple[str, ...] = ()
    # What a build records as not rendered (not_matched, shadowed); derived, not compared.
    unmatched: tuple[str, ...] = field(default=(), compare=False)
    shadowed: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __iter__(self) -> Iterator[InstructionSource]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


class InstructionStoreError(HarnessError):
    """The ``agent_instructions`` table could not be read; the message says what to do.

    Raised to the caller of ``load`` only: the cache task and the supervision tree are not
    affected, and nothing is cached, so the next ``load`` reads again.
    """
