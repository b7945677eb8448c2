"""Which files of a workspace are its instruction files, in which order (synchronous).

The package docstring (``harness.instruction_files.discovery``) has the example.

``discover(root, settings)`` is blocking code: ``InstructionFiles.load`` runs it in a worker
thread (``anyio.to_thread``) so the event loop never waits on the disk. The walk itself, the
reads, the symlink policy and the escaping live in ``harness.workspace``; which files of a
directory are read is each format's (``formats``); this module is the walk's visitor, handing
each directory's candidates to their formats, and assembles the ``InstructionSet``.

Rules, in the order a directory meets them (the walk has pruned ``.git``, vendored, symlinked
and gitignored directories already, silently):

- A candidate is read only when it is a regular file inside the workspace and not ignored by
  git. A FIFO, socket, device or directory with that name is never opened (its type is known
  before any open; the open itself uses ``O_NONBLOCK | O_NOFOLLOW`` relative to the
  directory's descriptor and re-checks with ``fstat`` in case the entry was swapped). A file
  symlink is followed only when ``harness.workspace.SymlinkPolicy`` allows its real path
  (inside the workspace, not under ``.git`` or a vendored name, not gitignored), resolved
  through descriptors so a race cannot lead it outside. Otherwise a committed
  ``docs/AGENTS.md -> ../.env`` would put a gitignored secret into the prompt.
- A chosen file is read whole (at most ``max_bytes``); over the cap, unreadable or
  whitespace-only, it is skipped with a warning.
- One file reachable by two paths (hard link, symlink or bind mount) is loaded once, at its
  first place in precedence order; the other paths are warnings (``harness.workspace._identity``
  says how "the same file" is decided).
- Text is UTF-8. A leading byte order mark is removed and invalid bytes become U+FFFD; both are
  alterations and so both are warnings. ``digest`` is the sha256 of the bytes as read.

Nothing in a tree can make the walk crash or hang: every ``OSError`` becomes a warning, the walk
is iterative (no recursion limit), symlinked directories (and so symlink loops) are never
entered, and no file is opened before its type is known.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Sequence

from harness.instruction_files._models import InstructionSet, InstructionSource, PassedRule
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._format import Directory, Found, InstructionFormat
from harness.instruction_files.discovery._globs import matching
from harness.instruction_files.discovery.formats import formats_for
from harness.workspace import (
    GITIGNORE,
    DirectoryWalk,
    Guide,
    Here,
    Identity,
    Pins,
    SymlinkPolicy,
    WalkCancelled,
    default_threads,
    display_path,
    printable,
    resolve_workspace,
)
from harness.workspace._ignore import WorkspaceRules, workspace_rules
from harness.workspace._import_door import ImportDoor
from harness.workspace._targets import ROOT, Scope, scope_of
from harness.workspace.deny import DenyRules

__all__ = ["Discovery", "DiscoveryCancelled", "applied", "discover", "walk_workspace"]

DiscoveryCancelled = WalkCancelled
"""The walk was asked to stop (its ``load`` was cancelled); nothing is returned."""


class Discovery:
    """The walk's visitor for instruction files, and the walk; shared by its threads (lists
    append under the GIL). ``rules``: the workspace's ignore rules when already known (a
    reload reuses its snapshot's); ``record`` / ``guide``: see ``DirectoryWalk``."""

    def __init__(
        self,
        root: str,
        settings: InstructionFilesSettings,
        stop: threading.Event | None,
        *,
        only: Scope | None = None,
        rules: WorkspaceRules | None = None,
        record: bool = False,
        guide: Guide | None = None,
    ) -> None:
        self.formats = formats_for(settings)
        candidates = frozenset().union(*(fmt.candidates() for fmt in self.formats))
        gitignores = GITIGNORE not in candidates  # else .gitignore is an instruction file
        if gitignores and rules is None:
            rules = workspace_rules(root)
        self._owners = {
            name: tuple(i for i, fmt in enumerate(self.formats) if name in fmt.candidates())
            for name in candidates
        }
        self.max_bytes = settings.max_bytes
        self.found: list[Found] = []
        self.local_reads: set[str] = set()  # local files read although an ignore rule lists them
        self.shadowing: dict[str, list[str]] = {}  # chosen file -> the files it shadows
        self.linked: set[str] = set()  # directories whose chosen candidate was a symlink
        self.pins = Pins()
        self.walk = DirectoryWalk(
            root,
            self,
            prune=settings.vendored,
            special=candidates,
            deny=DenyRules(settings.deny_read),
            stop=stop,
            gitignores=gitignores,
            only=only.only if only is not None else None,
            rules=rules,
            record=record,
            guide=guide,
        )
        base = self.walk.base
        self.symlinks = SymlinkPolicy(
            root, self.walk.prune, gitignores=gitignores, base=base, deny=self.walk.deny
        )
        self.door = ImportDoor(self.symlinks, cap=settings.max_bytes, stop=stop)  # @path imports
        if only is not None:
            self.walk.warnings.extend(only.warnings)

    def files(self, walk: DirectoryWalk, here: Here, named: dict[str, os.DirEntry[str]]) -> None:
        """Each format's ``visit`` of this directory, with its own candidates."""
        owners = self._owners
        if len(self.formats) == 1:
            self.formats[0].visit(Directory(self, walk, here, named, 0))
            return
        for index, fmt in enumerate(self.formats):
            mine = {name: entry for name, entry in named.items() if index in owners[name]}
            if mine:
                fmt.visit(Directory(self, walk, here, mine, index))

    def assemble(
        self, found: Sequence[Found], warnings: Sequence[tuple[str, str]]
    ) -> InstructionSet:
        """``found`` and ``warnings`` (this walk's, or a merged snapshot's) as a set; imports
        are read through this walk's symlink policy, so before ``release``."""
        return _assemble(self.formats, found, warnings, self.shadowing, self.door)

    def release(self) -> None:
        """Close what the walk held: the pinned files, the symlink policy's root."""
        self.pins.release()
        self.symlinks.close()


def discover(
    workspace: str | os.PathLike[str],
    settings: InstructionFilesSettings | None = None,
    *,
    stop: threading.Event | None = None,
    targets: Sequence[str | os.PathLike[str]] = (),
) -> InstructionSet:
    """Walk ``workspace`` and return its instruction files in ascending precedence; with
    ``targets``, only the chains of directories from the root to each target.

    Blocking. ``stop`` (set from another thread) makes the walk raise ``DiscoveryCancelled``
    soon after. Raises ``WorkspaceNotFoundError`` for a missing workspace and
    ``TargetOutsideWorkspace`` for a target outside it; every other problem is a warning in
    the result.
    """
    settings = settings if settings is not None else InstructionFilesSettings()
    root = resolve_workspace(workspace)
    scope = None
    if targets:
        given = os.path.abspath(os.fspath(workspace))
        deny = DenyRules(settings.deny_read)
        scope = scope_of(root, targets, prune=settings.vendored, workspace=given, deny=deny)
    found = walk_workspace(root, settings, stop, scope=scope)
    return applied(found, found.targets)


def walk_workspace(
    root: str,
    settings: InstructionFilesSettings,
    stop: threading.Event | None = None,
    *,
    scope: Scope | None = None,
) -> InstructionSet:
    """``discover`` for a root already resolved by ``resolve_workspace``; with ``scope``
    (``harness.workspace._targets.scope_of``) only the directories on its chains are walked."""
    discovery = Discovery(root, settings, stop, only=scope)
    try:
        # a scoped walk is a few directories: one thread, no pool
        discovery.walk.run(1 if scope is not None else settings.walk_threads or default_threads())
        found = discovery.assemble(discovery.found, discovery.walk.warnings)
    finally:
        discovery.release()
    if scope is None:
        return found
    chain = tuple(rel or ROOT for rel in scope.directories)
    return dataclasses.replace(found, targets=scope.targets, chain=chain)


def applied(found: InstructionSet, targets: tuple[str, ...]) -> InstructionSet:
    """``found`` for ``targets``: a rule with path globs stays only when one of them
    matches one of the targets (so none stays without targets)."""
    kept = tuple(
        source
        for source in found.sources
        if source.trigger != "paths" or matching(source.globs, targets) is not None
    )
    if len(kept) == len(found.sources):
        if found.targets == targets and not found.unmatched:
            return found
        kept = found.sources  # the cached tuple itself
        return dataclasses.replace(found, sources=kept, targets=targets, unmatched=())
    left = set(map(id, kept))
    unmatched = tuple(s.path for s in found.sources if id(s) not in left)
    return dataclasses.replace(found, sources=kept, targets=targets, unmatched=unmatched)


def _assemble(
    formats: Sequence[InstructionFormat],
    found_files: Sequence[Found],
    walk_warnings: Sequence[tuple[str, str]],
    shadowing: dict[str, list[str]],
    door: ImportDoor,
) -> InstructionSet:
    """Sort what the threads found, drop second paths to one file, and let each file's
    format make its sources (``door``: its walk must not be released yet)."""
    sources: list[InstructionSource] = []
    passed: list[PassedRule] = []
    local: list[str] = []
    first_path: dict[Identity, str] = {}
    warnings = list(walk_warnings)
    for found in sorted(found_files, key=Found.order):
        first = first_path.get(found.identity)
        if first is not None:
            warnings.append(
                (
                    found.rel,
                    f"skipped: the same file as {display_path(first)} (hard link or symlink); "
                    "loaded once",
                )
            )
            continue
        first_path[found.identity] = found.rel  # shown (display_path) when warned of
        made, notes = formats[found.format].sources(found, door)
        for item in made:
            if isinstance(item, InstructionSource):
                sources.append(item)
                if found.local:
                    local.append(item.path)
            else:
                passed.append(item)
        if notes:
            warnings.extend((found.rel, note) for note in notes)
    # a path denied below a rules directory may be met by the walk too: say it once
    warnings = list(dict.fromkeys(warnings))
    warnings.sort(key=lambda warning: warning[0])  # stable: a file's notes keep their order
    chosen = {source.path for source in sources}
    return InstructionSet(
        sources=tuple(sources),
        passed=tuple(sorted(passed, key=lambda rule: rule.path)),
        local=tuple(local),
        shadowed=tuple(
            (display_path(other), display_path(rel))
            for rel, others in sorted(shadowing.items())
            if display_path(rel) in chosen
            for other in others
        ),
        warnings=tuple(
            # printable: a reason may quote the workspace (a .gitignore line, say)
            f"{display_path(path)}: {printable(reason)}{_shadow_note(shadowing, path, reason)}"
            for path, reason in warnings
        ),
    )


def _shadow_note(shadowing: dict[str, list[str]], rel: str, reason: str) -> str:
    """For a rejected file that was chosen over others in its directory: which went unread."""
    shadowed = shadowing.get(rel)
    if not shadowed or not reason.startswith("skipped"):
        return ""
    names = ", ".join(display_path(other) for other in shadowed)
    return f"; it still shadows {names}, which is not read (one file per directory)"
