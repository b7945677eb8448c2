"""The walk of a workspace's directories, through directory descriptors (thread-safe).

    >>> import os, tempfile
    >>> from harness.workspace import DirectoryWalk, resolve_workspace
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> os.makedirs(os.path.join(root, "pkg", "node_modules"))
    >>> open(os.path.join(root, "pkg", "AGENTS.md"), "w").close()
    >>> class Names:                      # the visitor: what to do with the named entries
    ...     def __init__(self): self.seen = []
    ...     def files(self, walk, here, named): self.seen.extend(named)
    >>> names = Names()
    >>> walk = DirectoryWalk(root, names, prune=("node_modules",), special=("AGENTS.md",))
    >>> walk.run(threads=1); names.seen, walk.warnings
    (['AGENTS.md'], [])

A visitor (``Visitor``: one method, ``files``) says what to do with the entries named in
``special``; the walk does the rest: it lists each directory once with ``os.scandir`` (no
``stat`` per entry: the type comes from the listing), never enters ``.git``, a ``prune`` name,
a directory symlink or a directory ignored by git (``harness.workspace._ignore``: the
``.gitignore`` files above it, root and nested, and ``.git/info/exclude``) unless it holds
files tracked in the index, which it is then entered for alone, and turns every ``OSError``
into a warning. These prunes are policy, not problems: they are silent. A ``.gitignore`` or
exclude file that cannot be applied fails closed: nothing it governs is read (a warning says
so).

Race-free: the root is opened once; every directory is opened relative to its parent's
descriptor with ``O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC`` and listed with
``os.scandir(fd)``; a visitor opens files with ``dir_fd=`` (``Here.fd``). A directory swapped
for a symlink to somewhere else between its listing and its open is refused by the kernel
(``ELOOP``), so a walk can never be led outside the workspace. A directory stays open only
until its last queued subdirectory is opened (the fds held are about the depth of the tree),
within a process-wide budget; past it, a subdirectory is reached from the root one
``O_NOFOLLOW`` step at a time instead. ``PATH_MAX`` is honoured as if paths were used
(``paths.too_long``).

Speed: one ``open`` and one ``scandir`` per directory, each entry looked at once with set
lookups, prunes applied before a directory is queued, ``.gitignore`` rules evaluated only
below a ``.gitignore``. The walk is iterative (no recursion limit). On machines with CPUs to
spare, several threads share the stack of directories (listings release the GIL).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, NamedTuple, Protocol

from harness.errors import HarnessError
from harness.workspace._git_index import LazyTracked
from harness.workspace._gitignore import GITIGNORE
from harness.workspace._identity import PinBudget
from harness.workspace._ignore import IgnoreChain, WorkspaceRules, workspace_rules
from harness.workspace._paths import PATH_MAX, name_length, open_beneath, too_long
from harness.workspace._reading import DIR_FLAGS, reason
from harness.workspace._walk_entries import apply_gitignore, tracked_dirs, undenied
from harness.workspace._walk_pool import WalkPool
from harness.workspace.deny import DenyRules

__all__ = ["DirectoryWalk", "Guide", "Here", "Visitor", "WalkCancelled"]

_DIRECTORIES = PinBudget()  # directory descriptors all walks may keep open for their children
_RESERVE = 8  # taken from it at a time: about a tree's depth, so a walk takes it a few times


class WalkCancelled(HarnessError):
    """The walk was asked to stop (its ``load`` was cancelled); nothing is returned."""


class Here(NamedTuple):
    """The directory a visitor is shown: open as ``fd`` (open files with ``dir_fd=fd``),
    workspace-relative ``rel`` (``""`` for the root), its ``depth`` below the root, the bytes
    of its absolute path (``length``) and the ignore ``chain`` that applies to its entries."""

    fd: int
    rel: str
    depth: int
    length: int
    chain: IgnoreChain | None


class Visitor(Protocol):
    """What a walk does with the ``special`` entries of each directory."""

    def files(self, walk: DirectoryWalk, here: Here, named: dict[str, os.DirEntry[str]]) -> None:
        """Handle ``named`` (a directory among them is walked too); warn with ``walk.warn``."""


class Guide(Protocol):
    """Which subdirectories of some listed directories to walk (an incremental reload)."""

    directories: frozenset[str]

    def choose(self, rel: str, subdirs: list[str]) -> list[str]:
        """The subdirectories of ``rel`` (one of ``directories``) to walk now."""


_here = tuple.__new__  # a ``Here`` made without its Python-level ``__new__`` (``_named``)

_Parent = list[int | None]
"""A listed directory whose subdirectories are queued: one token per queued subdirectory,
popped as each is opened, the first (``[0]``) its descriptor (None: closed at once, past the
budget, so they are reached from the root). A child opens with ``[0]`` before it pops its
token; ``list.pop`` is atomic under the GIL, so the walk's threads need no lock, and exactly
one pop (the last: the list is popped from its end) gets the descriptor, and closes it."""

# (parent or None for the root, name, relative path, chain); the depth and the bytes of the
# absolute path follow from the relative path (``DirectoryWalk._length``)
_Job = tuple["_Parent | None", str, str, "IgnoreChain | None"]


class DirectoryWalk:
    """One walk of one workspace, shared by its threads; ``visitor`` handles the entries
    named in ``special``.

    ``only``, when set, narrows the walk to chains of directories (``targets.Scope.only``):
    per directory, the names of the subdirectories to enter; every other one is neither
    opened nor listed. Everything else (prunes, ``.gitignore``, warnings) is unchanged.
    ``rules``: the workspace's own ignore rules when the caller has them already (read
    from ``.git`` otherwise). ``record``: keep what a snapshot for incremental reloads
    needs (``listed``, ``chains``, ``entries``); ``guide`` picks the subdirectories of its
    directories to walk.
    """

    def __init__(
        self,
        root: str,
        visitor: Visitor,
        *,
        prune: Iterable[str],
        special: Iterable[str],
        stop: threading.Event | None = None,
        gitignores: bool = True,
        only: Mapping[str, frozenset[str]] | None = None,
        rules: WorkspaceRules | None = None,
        record: bool = False,
        guide: Guide | None = None,
        deny: DenyRules | None = None,
    ) -> None:
        self.root = root
        self.deny = deny if deny else None  # deny_read: never opened, not even listed
        self.visitor = visitor
        self.prune = frozenset((*prune, ".git"))
        self.gitignores = gitignores
        self.special = frozenset((*special, GITIGNORE)) if gitignores else frozenset(special)
        self.stop = stop
        self.only = only
        self.warnings: list[tuple[str, str]] = []
        self.base: IgnoreChain | None = None  # .git/info/exclude and the tracked paths
        self.closed = False  # the exclude file cannot be applied: nothing is read
        if gitignores:
            self._workspace_rules(rules if rules is not None else workspace_rules(root))
        self.root_fd = -1
        self._root_length = name_length(root)
        # A relative path shorter than this is surely within PATH_MAX (a character is at most
        # 4 bytes), so ``drain`` counts its bytes only past it.
        self._room = max(0, (PATH_MAX - self._root_length - 2) // 4)
        # When recorded (a snapshot for incremental reloads): the subdirectories each listed
        # directory walked (``listed``), the chain each applied .gitignore made for its
        # subtree (``chains``) and the chain of each ignored directory entered for its
        # tracked files (``entries``).
        self.listed: dict[str, Sequence[str]] | None = {} if record else None
        self.chains: dict[str, IgnoreChain] = {}
        self.entries: dict[str, IgnoreChain] = {}
        self.guide = guide
        self.guided = guide.directories if guide is not None else None
        self._open: dict[int, _Parent] = {}  # parents holding a descriptor, by it
        self._spare: list[None] = []  # one per descriptor taken from the budget, not held

    def warn(self, rel: str, reason: str) -> None:
        self.warnings.append((rel, reason))

    def _workspace_rules(self, rules: WorkspaceRules) -> None:
        self.base = rules.chain
        if rules.index_problem is not None:
            self.warn(".git/index", f"{rules.index_problem}: no file counts as tracked")
        if rules.exclude_problem is not None:
            self.warn(
                ".git/info/exclude",
                f"{rules.exclude_problem}: nothing is read, since what it ignores is unknown",
            )
            self.closed = True

    # -- one directory ---------------------------------------------------------------------

    def drain(self, stack: list[_Job], budget: int) -> None:
        """Scan directories popped from ``stack``, pushing their subdirectories back onto it,
        until it is empty or ``budget`` directories were scanned.

        This is the hot loop of every walk (one open and one listing per directory, set
        lookups per entry), kept in one function with local names, hence its length; rarer
        work (named entries, ``.gitignore``) is delegated.
        """
        special, prune, stop = self.special, self.prune, self.stop
        scandir, pop, extend, dopen = os.scandir, stack.pop, stack.extend, os.open
        listed, guide, room = self.listed, self.guided, self._room
        spare, opened = self._spare.pop, self._open
        unspare, closed, close = self._spare.append, self._open.pop, os.close
        only, deny = self.only, self.deny
        stopped = stop.is_set if stop is not None else None
        while stack and budget > 0:
            budget -= 1
            if stopped is not None and stopped():
                raise WalkCancelled
            parent, name, rel, chain = pop()
            try:
                if parent is not None and (at := parent[0]) is not None and len(rel) < room:
                    fd = dopen(name, DIR_FLAGS, dir_fd=at)  # the common case, inline
                else:
                    fd = self._open_dir(parent, rel)
            except OSError as exc:
                self.warn(rel or ".", f"directory skipped: it cannot be read ({reason(exc)})")
                continue
            finally:
                # the last queued subdirectory's pop gets the parent's descriptor: close it
                # (only this thread popped it) and give it back to the spare ones (``run``
                # closes those left on failure)
                if parent is not None and (last := parent.pop()) is not None:
                    closed(last)
                    unspare(None)
                    close(last)
            kept = False
            try:
                subdirs: list[str] = []
                named: dict[str, os.DirEntry[str]] | None = None
                try:
                    with scandir(fd) as entries:
                        for entry in entries:
                            name = entry.name
                            if name in special:
                                if named is None:
                                    named = {}
                                named[name] = entry
                            elif entry.is_dir(follow_symlinks=False) and name not in prune:
                                subdirs.append(name)
                except OSError as exc:
                    self.warn(rel or ".", f"directory skipped: it cannot be read ({reason(exc)})")
                    continue
                if named is None and not subdirs and (guide is None or rel not in guide):
                    if listed is not None:  # a leaf with nothing named: most directories
                        listed[rel] = ()
                    continue
                if only is not None:  # a scoped walk: only the subdirectories on its chains
                    on_chain = only.get(rel, frozenset())
                    subdirs = [name for name in subdirs if name in on_chain]
                if deny is not None and (
                    (named is not None and not deny.allowed_names.issuperset(named))
                    or (
                        subdirs
                        and not deny.allowed_dirs.issuperset(subdirs)
                        and deny.may_deny_dirs(subdirs)
                    )
                ):
                    named = undenied(self.warn, deny, rel, named, subdirs)
                if named is not None:
                    chain = self._named(fd, rel, chain, named, subdirs)
                    if only is not None:  # a named entry that is a directory was added
                        subdirs = [name for name in subdirs if name in on_chain]
                prefix = rel + "/" if rel else ""
                entered: Sequence[str] = ()  # ignored, entered for the tracked files they hold
                if (
                    subdirs
                    and chain is not None
                    # ``kept_dirs``'s common case inline: every name decided kept before
                    and not (
                        chain.name_only.get(prefix.count("/") + 1)
                        and chain.kept.issuperset(subdirs)
                    )
                ):
                    kept_dirs = chain.kept_dirs(prefix, subdirs)
                    if len(kept_dirs) < len(subdirs) and chain.tracked is not None:
                        entered = tracked_dirs(chain, prefix, subdirs, kept_dirs)
                    subdirs = kept_dirs
                if listed is not None:
                    if entered:
                        assert chain is not None
                        subdirs, entered = self._record_entered(rel, chain, subdirs, entered)
                    else:
                        # a tuple: the collector stops tracking it (a snapshot holds 1 per dir)
                        listed[rel] = tuple(subdirs) if subdirs else ()
                        if guide is not None and rel in guide:
                            assert self.guide is not None
                            subdirs = self.guide.choose(rel, subdirs)
                if not subdirs and not entered:
                    continue
                try:  # a spare descriptor (the common case, inline; else ``_hold``)
                    spare()
                    held: _Parent = [None] * (len(subdirs) + len(entered))
                    held[0] = fd
                    opened[fd] = held
                except IndexError:
                    held = self._hold(fd, len(subdirs) + len(entered))
                kept = held[0] is not None
                extend([(held, name, prefix + name, chain) for name in subdirs])
                if entered:
                    assert chain is not None
                    inside = chain.inside_ignored()
                    extend([(held, name, prefix + name, inside) for name in entered])
            finally:
                if not kept:
                    os.close(fd)

    def _record_entered(
        self, rel: str, chain: IgnoreChain, subdirs: list[str], entered: Sequence[str]
    ) -> tuple[list[str], Sequence[str]]:
        """``drain``'s recording for a directory with ignored subdirectories entered for
        their tracked files: (subdirectories, entered ones) to walk now."""
        assert self.listed is not None
        prefix = rel + "/" if rel else ""
        self.listed[rel] = [*subdirs, *entered]
        inside = chain.inside_ignored()
        self.entries.update((prefix + name, inside) for name in entered)
        if self.guide is None or rel not in self.guide.directories:
            return subdirs, entered
        now = set(self.guide.choose(rel, [*subdirs, *entered]))
        return [n for n in subdirs if n in now], [n for n in entered if n in now]

    def _open_dir(self, parent: _Parent | None, rel: str) -> int:
        """Open a directory the inline case of ``drain`` does not: the root, one whose path
        may be past ``PATH_MAX`` (refused if it is), one whose parent was closed (reached
        from the root)."""
        problem = too_long(self._length(rel))
        if problem is not None:
            raise problem
        if parent is None and not rel:
            return os.open(".", DIR_FLAGS, dir_fd=self.root_fd)
        if parent is not None and parent[0] is not None:
            return os.open(rel.rpartition("/")[2], DIR_FLAGS, dir_fd=parent[0])
        return open_beneath(self.root_fd, rel)

    def _length(self, rel: str) -> int:
        """Bytes of the absolute path of directory ``rel``."""
        return self._root_length + 1 + name_length(rel) if rel else self._root_length

    def _hold(self, fd: int, pending: int) -> _Parent:
        """``fd`` kept open for its ``pending`` subdirectories, within the process-wide
        budget, which ``drain`` found it has no spare descriptor of: ``_RESERVE`` more are
        taken from it (``run`` gives back what is left). Lock-free: ``list.pop``,
        ``list.extend`` and ``set.add`` are atomic under the GIL."""
        taken = _DIRECTORIES.take_up_to(_RESERVE)
        held: _Parent = [None] * pending
        if not taken:
            return held
        self._spare.extend((None,) * (taken - 1))
        held[0] = fd
        self._open[fd] = held
        return held

    def _named(
        self,
        fd: int,
        rel: str,
        chain: IgnoreChain | None,
        named: dict[str, os.DirEntry[str]],
        subdirs: list[str],
    ) -> IgnoreChain | None:
        """The special entries: one that is a directory is walked like any other (the
        visitor still sees it, to warn), the ``.gitignore`` is applied, the rest goes to the
        visitor."""
        for name, entry in named.items():
            if name not in self.prune and entry.is_dir(follow_symlinks=False):
                subdirs.append(name)
        gitignore = named.pop(GITIGNORE, None) if self.gitignores else None
        # Inside an ignored directory (entered for its tracked files) git reads no .gitignore.
        if gitignore is not None and not (chain is not None and chain.only_tracked):
            applied = self.apply_gitignore(fd, gitignore, rel, chain)
            if applied is False:  # (mypy narrows the Literal)
                # What it ignores is unknown, so nothing it governs may be read: fail closed.
                subdirs.clear()
                return chain
            chain = applied
            if self.listed is not None and applied is not None:
                self.chains[rel] = applied
        if named:
            if rel:  # ``_length`` inline
                depth = rel.count("/") + 1
                length = self._root_length + 1 + (len(rel) if rel.isascii() else name_length(rel))
            else:
                depth, length = 0, self._root_length
            self.visitor.files(self, _here(Here, (fd, rel, depth, length, chain)), named)
        return chain

    def apply_gitignore(
        self, fd: int, entry: os.DirEntry[str], rel: str, chain: IgnoreChain | None
    ) -> IgnoreChain | Literal[False] | None:
        """The chain with this ``.gitignore`` applied, or False (warned) when it exists but
        cannot be read or is over the cap (``harness.workspace._walk_entries``)."""
        return apply_gitignore(self.warn, fd, entry, rel, chain)

    # -- the whole tree --------------------------------------------------------------------

    def run(
        self, threads: int, starts: Iterable[tuple[str, IgnoreChain | None]] | None = None
    ) -> None:
        """Walk the whole tree (blocking); ``WalkCancelled`` when ``stop`` is set.

        ``starts``: the directories to walk from, (relative path, the ignore chain above it),
        each reached from the root one ``O_NOFOLLOW`` step at a time (default: the root)."""
        if self.closed:  # warned: the exclude file cannot be applied
            return
        try:
            self.root_fd = os.open(self.root, DIR_FLAGS)
        except OSError as exc:
            self.warn(".", f"directory skipped: it cannot be read ({reason(exc)})")
            return
        try:
            stack: list[_Job] = [
                (None, "", rel, chain)
                for rel, chain in (starts if starts is not None else (("", self.base),))
            ]
            if threads <= 1:
                self.drain(stack, sys.maxsize)
            else:
                WalkPool(self.drain, stack, threads).run()
            self._index_problem()
        finally:
            # Every thread is done (cancelled or failed: parents still queued hold theirs).
            left = list(self._open)
            for held in self._open.values():
                if held:
                    held[0] = None
            self._open.clear()
            spare = len(self._spare)
            self._spare.clear()
            for fd in left:
                os.close(fd)
            _DIRECTORIES.give_back(len(left) + spare)
            os.close(self.root_fd)
            self.root_fd = -1

    def _index_problem(self) -> None:
        """Warn if the index this walk read (lazily) could not be read."""
        tracked = self.base.tracked if self.base is not None else None
        problem = tracked.take_problem() if isinstance(tracked, LazyTracked) else None
        if problem is not None:
            self.warn(".git/index", f"{problem}: no file counts as tracked")
