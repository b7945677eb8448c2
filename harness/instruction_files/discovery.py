"""Which files of a workspace are its instruction files, in which order (synchronous).

    >>> import os, tempfile
    >>> from harness.instruction_files import discover
    >>> ws = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(ws, "pkg"))
    >>> for rel in ("AGENTS.md", "pkg/AGENTS.md"):
    ...     with open(os.path.join(ws, rel), "w") as out:
    ...         _ = out.write(f"rules of {rel}\\n")
    >>> [source.path for source in discover(ws)]
    ['AGENTS.md', 'pkg/AGENTS.md']

``discover(root, settings)`` is blocking code: ``InstructionFiles.load`` runs it in a worker
thread (``anyio.to_thread``) so the event loop never waits on the disk. The walk itself, the
reads, the symlink policy and the escaping live in ``harness.workspace``; this module keeps
what is particular to instruction files: which names, which one wins in a directory, and how
the ``InstructionSet`` is assembled.

Rules, in the order a directory meets them (the walk has pruned ``.git``, vendored, symlinked
and gitignored directories already, silently):

- Per directory, the instruction file is the first of ``settings.names`` that is a regular
  file inside the workspace and not ignored by ``.gitignore``. A FIFO, socket, device or
  directory with that name is never opened (its type is known before any open; the open itself
  uses ``O_NONBLOCK | O_NOFOLLOW`` relative to the directory's descriptor and re-checks with
  ``fstat`` in case the entry was swapped). A file symlink is followed only when
  ``harness.workspace.SymlinkPolicy`` allows its real path (inside the workspace, not under
  ``.git`` or a vendored name, not gitignored), resolved through descriptors so a race cannot
  lead it outside. Otherwise a committed ``docs/AGENTS.md -> ../.env`` would put a gitignored
  secret into the prompt. Each candidate passed over is a warning, and the next name is tried.
- The chosen file is then read whole (at most ``max_bytes``); if it is then rejected (over the
  cap, unreadable, whitespace-only, or the same file as one already loaded) the directory has no
  instruction file: the next name is NOT consulted, and a warning says why.
- One file reachable by two paths (hard link, symlink or bind mount) is loaded once, at its
  first place in precedence order; the other paths are warnings (``harness.workspace.identity``
  says how "the same file" is decided).
- Text is UTF-8. A leading byte order mark is removed and invalid bytes become U+FFFD; both are
  alterations and so both are warnings. ``digest`` is the sha256 of the bytes as read.

Nothing in a tree can make the walk crash or hang: every ``OSError`` becomes a warning, the walk
is iterative (no recursion limit), symlinked directories (and so symlink loops) are never
entered, and no file is opened before its type is known.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from harness.instruction_files.models import InstructionSet, InstructionSource
from harness.instruction_files.settings import InstructionFilesSettings
from harness.workspace import (
    GITIGNORE,
    DirectoryWalk,
    FileRead,
    Identity,
    Pins,
    SymlinkPolicy,
    SymlinkRefusal,
    WalkCancelled,
    decode,
    default_threads,
    describe,
    display_path,
    kind_of,
    name_length,
    printable,
    read_file,
    reason,
    resolve_workspace,
    too_long,
)
from harness.workspace.ignore import IgnoreChain
from harness.workspace.import_door import ImportDoor, expand_file, revision
from harness.workspace.targets import ROOT, Scope, scope_of

__all__ = ["DiscoveryCancelled", "discover", "walk_workspace"]

DiscoveryCancelled = WalkCancelled
"""The walk was asked to stop (its ``load`` was cancelled); nothing is returned."""


@dataclass(slots=True)
class _Found:
    depth: int
    rel: str
    identity: Identity
    data: bytes


class _Walk(DirectoryWalk):
    """One walk for instruction files; shared by its threads (lists append under the GIL)."""

    def __init__(
        self, root: str, settings: InstructionFilesSettings, stop: threading.Event | None
    ) -> None:
        gitignores = GITIGNORE not in settings.names  # else .gitignore is an instruction file
        super().__init__(
            root,
            prune=settings.vendored,
            special=settings.names,
            stop=stop,
            gitignores=gitignores,
        )
        self.names = settings.names
        self.max_bytes = settings.max_bytes
        self.found: list[_Found] = []
        self.shadowing: dict[str, list[str]] = {}  # chosen file -> the files it shadows
        self.linked: set[str] = set()  # directories whose chosen candidate was a symlink
        self.pins = Pins()
        self.symlinks = SymlinkPolicy(root, self.prune, gitignores=gitignores, base=self.base)
        self.door = ImportDoor(
            self.symlinks, cap=settings.max_bytes, stop=stop
        )  # for @path imports

    def files(
        self,
        fd: int,
        rel: str,
        depth: int,
        length: int,
        chain: IgnoreChain | None,
        named: dict[str, os.DirEntry[str]],
    ) -> None:
        prefix = rel + "/" if rel else ""
        for index, name in enumerate(self.names):
            entry = named.get(name)
            if entry is None:
                continue
            file_rel = prefix + name
            if chain is not None and chain.ignored(file_rel, name, False):
                if not chain.only_tracked:  # inside an ignored directory: silent, as a prune
                    self.warn(file_rel, "skipped: ignored by .gitignore")
                continue
            file_length = length + 1 + name_length(name)
            eligible = self._eligible(entry, file_rel, file_length)
            if eligible is None:
                continue
            # The chosen file shadows the later names present; should it be rejected after
            # all (too big, blank, ...), its warning says what it kept from being read.
            shadowed = [
                prefix + other
                for other in self.names[index + 1 :]
                if other in named and not named[other].is_dir(follow_symlinks=False)
            ]
            if shadowed:
                self.shadowing[file_rel] = shadowed
            target, real_rel = eligible
            self._read(target, fd, real_rel, file_rel, depth, file_length)
            break

    def _eligible(
        self, entry: os.DirEntry[str], file_rel: str, length: int
    ) -> tuple[str | int, str] | None:
        """(name to open, or the descriptor of a followed symlink's target; its real
        workspace-relative path) if ``entry`` is a regular file inside the workspace that
        may be read, else warn."""
        try:
            if not entry.is_symlink():
                if entry.is_file(follow_symlinks=False):
                    return entry.name, file_rel
                mode = entry.stat(follow_symlinks=False).st_mode
                self.warn(file_rel, f"skipped: {kind_of(mode)}, not a regular file")
                return None
            self.linked.add(file_rel.rpartition("/")[0])  # depends on what it points to
            problem = too_long(length)
            if problem is not None:
                raise problem
            target = self.symlinks.open_target(file_rel)
        except OSError as exc:
            self.warn(file_rel, f"skipped: it cannot be examined ({reason(exc)})")
            return None
        if isinstance(target, SymlinkRefusal):
            self.warn(file_rel, f"skipped: {describe(target)}")
            return None
        if target.fd is None:
            self.warn(file_rel, f"skipped: a symlink to {kind_of(target.mode)}, not a regular file")
            return None
        return target.fd, target.real_rel

    def _read(
        self, target: str | int, dir_fd: int, real_rel: str, file_rel: str, depth: int, length: int
    ) -> None:
        problem = too_long(length) if isinstance(target, str) else None
        if problem is not None:
            self.warn(file_rel, f"skipped: it cannot be opened ({reason(problem)})")
            return
        read = read_file(target, cap=self.max_bytes, dir_fd=dir_fd, keep=True)
        if read.problem is not None:
            self._rejected(file_rel, read)
            return
        self.found.append(_Found(depth, file_rel, self.pins.identity(read, real_rel), read.data))

    def _rejected(self, file_rel: str, read: FileRead) -> None:
        if read.problem == "special":
            assert read.info is not None
            mode = read.info.st_mode
            self.warn(file_rel, f"skipped: {kind_of(mode)} (it changed during the walk)")
        elif read.problem in ("size", "grew"):
            self.warn(
                file_rel,
                f"skipped: {read.size} bytes, over the max_bytes cap of {self.max_bytes} "
                "(raise instruction_files.max_bytes to load it)",
            )
        else:
            assert read.error is not None
            verb = "opened" if read.problem == "open" else "read"
            self.warn(file_rel, f"skipped: it cannot be {verb} ({reason(read.error)})")

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
        scope = scope_of(root, targets, prune=settings.vendored, workspace=given)
    return walk_workspace(root, settings, stop, scope=scope)


def walk_workspace(
    root: str,
    settings: InstructionFilesSettings,
    stop: threading.Event | None = None,
    *,
    scope: Scope | None = None,
) -> InstructionSet:
    """``discover`` for a root already resolved by ``resolve_workspace``; with ``scope``
    (``harness.workspace.targets.scope_of``) only the directories on its chains are walked."""
    walk = _Walk(root, settings, stop)
    if scope is not None:  # a few directories: one thread, no pool
        walk.only = scope.only
        walk.warnings.extend(scope.warnings)
    try:
        walk.run(1 if scope is not None else settings.walk_threads or default_threads())
        found = _assemble(walk.found, walk.warnings, walk.shadowing, walk.door)  # (imports:
        # read through the walk's symlink policy, so before it is released)
    finally:
        walk.release()
    if scope is None:
        return found
    chain = tuple(rel or ROOT for rel in scope.directories)
    return dataclasses.replace(found, targets=scope.targets, chain=chain)


def _assemble(
    found_files: Sequence[_Found],
    walk_warnings: Sequence[tuple[str, str]],
    shadowing: dict[str, list[str]],
    door: ImportDoor,
) -> InstructionSet:
    """Sort what the threads found, drop second paths to one file, decode, and expand
    ``@path`` imports through ``door`` (its walk must not be released yet)."""
    sources: list[InstructionSource] = []
    first_path: dict[Identity, str] = {}
    warnings = list(walk_warnings)
    for found in sorted(found_files, key=lambda item: (item.depth, item.rel)):
        rel = display_path(found.rel)
        identity = found.identity
        first = first_path.get(identity)
        if first is not None:
            warnings.append(
                (
                    found.rel,
                    f"skipped: the same file as {first} (hard link or symlink); loaded once",
                )
            )
            continue
        first_path[identity] = rel
        content, altered = decode(found.data)
        if not content.strip():
            warnings.append((found.rel, "skipped: empty or whitespace-only"))
            continue
        warnings.extend((found.rel, note) for note in altered)
        content, imports, notes = expand_file(door, found.rel, content)
        warnings.extend((found.rel, note) for note in notes)
        digest = hashlib.sha256(found.data).hexdigest()
        sources.append(
            InstructionSource(
                kind="root" if found.depth == 0 else "directory",
                path=rel,
                content=content,
                digest=digest,
                depth=found.depth,
                version=revision(digest, imports),
                imports=imports,
            )
        )
    warnings.sort(key=lambda warning: warning[0])  # stable: a file's notes keep their order
    return InstructionSet(
        sources=tuple(sources),
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
