"""Targets: the paths a run will touch, and the chain of directories each one sits in.

    >>> import os, tempfile
    >>> from harness.workspace import resolve_workspace
    >>> from harness.workspace._targets import scope_of
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> os.makedirs(os.path.join(root, "packages", "parser", "src"))
    >>> scope = scope_of(root, ["packages/parser/src/tokenize.ts", "packages/"], prune=())
    >>> scope.targets
    ('packages/parser/src/tokenize.ts', 'packages')
    >>> scope.directories
    ('', 'packages', 'packages/parser', 'packages/parser/src')

A target is workspace-relative (never relative to the current directory) or absolute; an
absolute target must lie lexically under the workspace (its real path, or the path it was
given by), else it is outside: nothing about it is looked up. It need not exist: its chain
ends at its deepest existing ancestor directory; a file's chain ends at its directory, a
directory's at itself.

Chains are computed on the target's REAL path, resolved one component at a time from the
root's descriptor (``fstatat``/``readlinkat``/``openat`` relative to the directory reached,
each directory opened with ``O_NOFOLLOW``), so a target through a symlinked directory gets
the chain of where it really lies, and the path checked is the path the walk then opens. A
``..`` above the root or a symlink (directory or file, absolute or relative, dangling or not)
whose target lies outside raises ``TargetOutsideWorkspace``; an absolute link target is
accepted only when it names a path under the workspace's real path, and is then resolved
through descriptors again. ``.git`` and the ``prune`` (vendored) names are never entered, not
even to resolve a path through them: the chain ends above them, since the walk would never
enter them (what lies below contributes nothing). Gitignored directories are left to the
walk, which applies the ``.gitignore`` files of the chain's directories exactly as a full walk
does. A component that cannot be examined (permission, a symlink loop) ends the chain where
it is, with a warning.

A target is at most ``PATH_MAX`` (4096) bytes, holds no NUL and can be encoded for the file
system; a load takes at most ``TARGETS_MAX`` (1024) targets. Otherwise ``ArgumentError``
says so before anything is looked up. ``resolve_scope``
(what a load awaits) resolves on the event loop only while that is a few system calls: past
``ON_LOOP`` path components in all (long targets, symlinks expanding to long paths) it starts
again in a stoppable worker thread, so no target stalls the loop, cache hit or not.

``Scope.directories`` is the union over all targets (``""`` is the root), sorted as
instruction files are (shallow to deep, ties by path); ``Scope.only`` says, per directory on
the chains, which of its subdirectories are on them: ``DirectoryWalk.only``, so the walk lists
the chain's directories and nothing else.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import posixpath
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from harness.errors import ArgumentError, HarnessError
from harness.workspace._display import display_path
from harness.workspace._reading import DIR_FLAGS, reason
from harness.workspace._stoppable import run_stoppable
from harness.workspace._walk import WalkCancelled
from harness.workspace.deny import DenyRules

__all__ = [
    "ON_LOOP",
    "ROOT",
    "TARGETS_MAX",
    "TARGET_MAX",
    "Scope",
    "TargetOutsideWorkspace",
    "chain_of",
    "resolve_scope",
    "scope_of",
]

ROOT = "."
"""How the workspace root itself is written in ``targets`` and chains."""
TARGET_MAX = 4096
"""The longest target accepted, in bytes: ``PATH_MAX``, what any one path may be."""
TARGETS_MAX = 1024
"""The most targets one load accepts: each is resolved and held in the cache key, so the
count is bounded like each target's length (a run touching more loads without targets)."""
ON_LOOP = 128
"""Path components ``resolve_scope`` examines on the event loop before moving to a thread."""
_MAX_HOPS = 40  # as the kernel's MAXSYMLINKS


class _OverBudget(HarnessError):
    """The resolution took more components than it was allowed on the event loop."""


class _Steps:
    """What one resolution may still do: ``left`` components (None: no limit), stopping
    with ``WalkCancelled`` once ``stop`` (the worker thread's event) is set."""

    __slots__ = ("left", "stop")

    def __init__(self, left: int | None, stop: threading.Event | None) -> None:
        self.left = left
        self.stop = stop

    def take(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise WalkCancelled
        if self.left is not None:
            self.left -= 1
            if self.left < 0:
                raise _OverBudget


class TargetOutsideWorkspace(HarnessError, ValueError):
    """A target resolves outside the workspace (through ``..`` or a symlink); nothing outside
    was read. ``target`` is the target as given."""

    def __init__(self, message: str, target: str = "") -> None:
        super().__init__(message)
        self.target = target


class _Directories(tuple[str, ...]):
    """A scope's chain directories: a tuple whose hash and equality are those of its sha256
    digest, computed once when the scope is made (in the worker thread for long chains), so
    a cache lookup keyed on it costs the same for one short chain and for sixteen of 4 KB."""

    digest: bytes

    def __new__(cls, items: Iterable[str]) -> _Directories:
        self = super().__new__(cls, items)
        summed = hashlib.sha256()
        for rel in self:
            summed.update(rel.encode("utf-8", "surrogatepass") + b"\0")
        self.digest = summed.digest()
        return self

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Directories):
            return self.digest == other.digest
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other


@dataclass(frozen=True, slots=True)
class Scope:
    """The targets of one load (normalised, workspace-relative, as given; ``"."`` for the
    root) and the directories on their chains (``""`` for the root), with any warnings."""

    targets: tuple[str, ...]
    directories: tuple[str, ...]
    warnings: tuple[tuple[str, str], ...] = ()
    only: dict[str, frozenset[str]] = field(default_factory=dict, compare=False)


def _outside(given: str, how: str) -> TargetOutsideWorkspace:
    return TargetOutsideWorkspace(
        f"target {display_path(given)!r} resolves outside the workspace ({how}): give a path "
        "inside it, relative to the workspace root or absolute",
        given,
    )


def _relative(root: str, given: str, workspace: str | None) -> str:
    """``given`` as a "/"-separated path below the root (not yet normalised)."""
    if not os.path.isabs(given):
        return given.replace(os.sep, "/")
    norm = os.path.normpath(given)
    for base in (root, workspace):
        if base is None:
            continue
        if norm == base:
            return ""
        prefix = base if base.endswith(os.sep) else base + os.sep
        if norm.startswith(prefix):
            return norm[len(prefix) :].replace(os.sep, "/")
    raise _outside(given, "an absolute path not under the workspace")


def normalised(rel: str) -> str:
    """How a target is recorded: lexically normalised, ``"."`` for the root."""
    if not rel:
        return ROOT
    norm = posixpath.normpath(rel)
    return norm if norm != ".." and not norm.startswith("../") else rel.rstrip("/")


def chain_of(
    root: str,
    root_fd: int,
    rel: str,
    prune: frozenset[str],
    given: str,
    steps: _Steps | None = None,
    deny: DenyRules | None = None,
) -> tuple[tuple[str, ...], str | None]:
    """The real path (its parts) of the deepest existing directory of target ``rel`` below
    the root (real path ``root``, open as ``root_fd``), and why the chain ended early when a
    component could not be examined. ``steps`` is charged one per component examined. A
    directory ``deny`` denies is never opened: the chain ends above it, warned.

    One loop over the components (a stack: a link's target is pushed back onto it), kept in
    one function so the descriptors it holds are closed in one ``finally``; hence its length.
    """
    todo = [part for part in reversed(rel.split("/")) if part not in ("", ".")]
    done: list[str] = []
    fds: list[int] = []
    virtual = 0  # components below ``done`` not entered (missing, a file, a pruned name)
    hops = 0
    note: str | None = None
    try:
        while todo:
            part = todo.pop()
            if steps is not None:
                steps.take()
            if virtual:  # resolved as a path string: ".." climbs back out of them
                virtual += -1 if part == ".." else 1
                continue
            if part == "..":
                if not done:
                    raise _outside(given, "'..' above the workspace root")
                done.pop()
                os.close(fds.pop())
                continue
            if part in prune:  # never entered, not even to pass through
                virtual = 1
                continue
            here = fds[-1] if fds else root_fd
            try:
                info = os.stat(part, dir_fd=here, follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    hops += 1
                    if hops > _MAX_HOPS:
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                    link = os.readlink(part, dir_fd=here)
                    if link.startswith("/"):
                        below = _below_root(link, root)
                        if below is None:
                            raise _outside(given, f"a symlink to {display_path(link)}")
                        while fds:
                            os.close(fds.pop())
                        done.clear()
                        link = below
                    todo.extend(p for p in reversed(link.split("/")) if p not in ("", "."))
                    continue
                if not stat.S_ISDIR(info.st_mode):  # a file: its chain ends at its directory
                    virtual = 1
                    continue
                pattern = deny.entry("/".join((*done, part)), True) if deny is not None else None
                if pattern is not None:  # deny_read: not opened, not even to pass through
                    virtual = 1
                    note = _denied_note("/".join((*done, part)), pattern)
                    continue
                fds.append(os.open(part, DIR_FLAGS, dir_fd=here))
                done.append(part)
            except (FileNotFoundError, NotADirectoryError):
                virtual = 1  # does not exist (yet): its deepest existing ancestor counts
            except OSError as exc:
                where = "/".join((*done, part))
                return tuple(done), (
                    f"target's chain ends above {where}, which cannot be examined ({reason(exc)})"
                )
        return tuple(done), note
    finally:
        for fd in fds:
            os.close(fd)


def _denied_note(where: str, pattern: str) -> str:
    return (
        f"target's chain stops above {display_path(where)}: it matches the deny_read pattern "
        f"{pattern!r} (setting deny_read), so it is never opened"
    )


def _below_root(link: str, root: str) -> str | None:
    """An absolute link target as a path below the root ("" for the root), or None when it
    does not name a path under the root's real path (judged on the string: nothing outside
    is looked up; what is below the root is then resolved through descriptors again)."""
    if link.rstrip("/") == root:
        return ""
    prefix = root if root.endswith("/") else root + "/"
    return link[len(prefix) :] if link.startswith(prefix) else None


def scope_of(
    root: str,
    targets: Iterable[str | os.PathLike[str]],
    *,
    prune: Iterable[str],
    workspace: str | None = None,
    stop: threading.Event | None = None,
    budget: int | None = None,
    deny: DenyRules | None = None,
) -> Scope:
    """The scope of ``targets`` in the workspace whose real path is ``root`` (``workspace``:
    the absolute path it was given by, for absolute targets written through it). Raises
    ``TargetOutsideWorkspace`` for the first target that resolves outside, ``ArgumentError``
    for one that cannot be a path; ``WalkCancelled`` soon after ``stop`` is set (from
    another thread). ``budget``: at most that many components, for ``resolve_scope``.
    ``deny``: the ``deny_read`` rules (a denied directory on a chain is never opened)."""
    targets = _counted(targets)
    steps = _Steps(budget, stop) if budget is not None or stop is not None else None
    pruned = frozenset((*prune, ".git"))
    recorded: dict[str, None] = {}
    chains: set[tuple[str, ...]] = set()
    warnings: list[tuple[str, str]] = []
    root_fd = os.open(root, DIR_FLAGS)
    try:
        for target in targets:
            given = _given(target)
            rel = _relative(root, given, workspace)
            parts, warning = chain_of(root, root_fd, rel, pruned, given, steps, deny or None)
            if warning is not None:
                warnings.append((normalised(rel), warning))
            recorded.setdefault(normalised(rel), None)
            chains.add(parts)
    finally:
        os.close(root_fd)
    return _scope(tuple(recorded), chains, warnings)


def _counted(
    targets: Iterable[str | os.PathLike[str]],
) -> tuple[str | os.PathLike[str], ...]:
    """``targets`` as a tuple, refused past ``TARGETS_MAX`` (read no further than that)."""
    counted = tuple(itertools.islice(targets, TARGETS_MAX + 1))
    if len(counted) > TARGETS_MAX:
        raise ArgumentError(
            f"more than {TARGETS_MAX} targets given: pass at most {TARGETS_MAX} paths the run "
            "will touch, or none to load the whole workspace's instructions"
        )
    return counted


def _given(target: str | os.PathLike[str]) -> str:
    try:
        given = os.fspath(target)
    except TypeError:
        raise ArgumentError(
            f"a target must be a path (str or os.PathLike), got {target!r}"
        ) from None
    if not isinstance(given, str) or not given:
        raise ArgumentError(
            f"a target must be a non-empty path ('.' for the workspace root), got {given!r}"
        )
    shown = given[:80] + ("..." if len(given) > 80 else "")  # repr below escapes it all
    if "\0" in given:
        raise ArgumentError(f"target {shown!r} contains a NUL character: no path can")
    try:
        size = len(os.fsencode(given))
    except UnicodeEncodeError as exc:
        raise ArgumentError(
            f"target {shown!r} cannot be encoded as a file name ({exc.reason}): pass a path"
        ) from None
    if size > TARGET_MAX:
        raise ArgumentError(
            f"target {shown!r} is {size} bytes, longer than any path may be ({TARGET_MAX}): "
            "pass the path of the file or directory the run will touch"
        )
    return given


async def resolve_scope(
    root: str,
    targets: Iterable[str | os.PathLike[str]],
    *,
    prune: Iterable[str],
    workspace: str | None = None,
    deny: DenyRules | None = None,
) -> Scope:
    """``scope_of`` for a load on the event loop: resolved right there while it takes at
    most ``ON_LOOP`` components (the common case: a few system calls, no thread hop), else
    again in a stoppable worker thread (a cancelled load neither waits for it nor leaves it
    running)."""
    targets, prune = _counted(targets), tuple(prune)
    try:
        return scope_of(root, targets, prune=prune, workspace=workspace, budget=ON_LOOP, deny=deny)
    except _OverBudget:
        pass
    return await run_stoppable(
        lambda stop: scope_of(root, targets, prune=prune, workspace=workspace, stop=stop, deny=deny)
    )


def _scope(
    targets: tuple[str, ...], chains: Iterable[Sequence[str]], warnings: list[tuple[str, str]]
) -> Scope:
    only: dict[str, set[str]] = {"": set()}
    for parts in chains:
        parent = ""
        for part in parts:
            only.setdefault(parent, set()).add(part)
            parent = f"{parent}/{part}" if parent else part
            only.setdefault(parent, set())
    directories = _Directories(sorted(only, key=lambda rel: (rel.count("/") + bool(rel), rel)))
    frozen = {rel: frozenset(names) for rel, names in only.items()}
    return Scope(targets, directories, tuple(warnings), frozen)
