"""The paths a workspace's git index tracks (a ``.gitignore`` never applies to them).

::

    >>> from harness.workspace._git_index import load_tracked
    >>> tracked, problem = load_tracked("/srv/checkouts/acme")    # doctest: +SKIP
    >>> tracked.tracked("docs/AGENTS.md"), tracked.holds("docs")   # doctest: +SKIP
    (True, True)
"""

from __future__ import annotations

import io
import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from harness.workspace._reading import FileRead, read_file, reason

__all__ = ["LazyTracked", "TrackedPaths", "git_dirs", "git_places", "load_tracked"]

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_MAX_INDEX_BYTES = 512 << 20
_GITDIR_FILE_MAX = 64 << 10
_CACHE_SIZE = 64
_SKIP_WORKTREE = 0x4000  # dulwich.index.EXTENDED_FLAG_SKIP_WORKTREE


@dataclass(frozen=True, slots=True)
class TrackedPaths:
    """Workspace-relative POSIX paths (``str``, undecodable bytes as surrogate escapes, as
    ``os.scandir`` names them) of the tracked files, and of every directory holding one."""

    files: frozenset[str] = field(default_factory=frozenset)
    dirs: frozenset[str] = field(default_factory=frozenset)

    def tracked(self, rel: str) -> bool:
        return rel in self.files

    def holds(self, rel: str) -> bool:
        """Whether directory ``rel`` holds a tracked path (at any depth)."""
        return rel in self.dirs

    def __bool__(self) -> bool:
        return bool(self.files)


EMPTY = TrackedPaths()


class LazyTracked:
    """The tracked paths of the work tree at ``root``, read from its index on the first
    question. Tracked paths change an answer only where an ignore rule matches, so a walk
    whose rules match nothing on its way (a scoped load, usually) never imports dulwich nor
    parses the index. ``take_problem`` hands why the index could not be read to the one
    caller that reports it. Thread-safe."""

    __slots__ = ("_lock", "_paths", "_problem", "_root")

    def __init__(self, root: str) -> None:
        self._root = root
        self._paths: TrackedPaths | None = None
        self._problem: str | None = None
        self._lock = threading.Lock()

    def _load(self) -> TrackedPaths:
        paths = self._paths
        if paths is None:
            with self._lock:
                if self._paths is None:
                    self._paths, self._problem = load_tracked(self._root)
                paths = self._paths
        return paths

    @property
    def loaded(self) -> bool:
        return self._paths is not None

    def tracked(self, rel: str) -> bool:
        return rel in self._load().files

    def holds(self, rel: str) -> bool:
        """Whether directory ``rel`` holds a tracked path (at any depth)."""
        return rel in self._load().dirs

    def take_problem(self) -> str | None:
        """Why the index could not be read (once; None if not read yet or readable)."""
        with self._lock:
            problem, self._problem = self._problem, None
        return problem


def has_index(root: str) -> bool:
    """Whether the work tree at ``root`` has an index file (one ``stat``; not read)."""
    dirs = git_dirs(root)
    return dirs is not None and os.path.lexists(os.path.join(dirs[0], "index"))


def _read_small(path: str, cap: int) -> bytes | None:
    try:
        fd = os.open(path, _FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, cap)
    except OSError:
        return None
    finally:
        os.close(fd)


def git_dirs(root: str) -> tuple[str, str] | None:
    """(git directory, common directory) of the work tree at ``root``, or None when
    ``root/.git`` is neither a directory nor a ``gitdir:`` file.

    The index lives in the git directory; ``info/exclude`` in the common one (they differ
    for a linked worktree, whose git directory names the shared one in ``commondir``).
    """
    dot_git = os.path.join(root, ".git")
    try:
        info = os.lstat(dot_git)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        gitdir = dot_git
    elif stat.S_ISREG(info.st_mode):
        data = _read_small(dot_git, _GITDIR_FILE_MAX)
        if data is None or not data.startswith(b"gitdir:"):
            return None
        target = os.fsdecode(data[len(b"gitdir:") :].strip())
        gitdir = os.path.normpath(os.path.join(root, target))
    else:
        return None
    common = _read_small(os.path.join(gitdir, "commondir"), _GITDIR_FILE_MAX)
    if common is None or not common.strip():
        return gitdir, gitdir
    return gitdir, os.path.normpath(os.path.join(gitdir, os.fsdecode(common.strip())))


def git_places(root: str) -> tuple[str, ...]:
    """The real paths of what a walk of ``root`` reads from git that lie outside
    ``<root>/.git``: a linked worktree's git directory (its index, under the main
    repository's ``.git/worktrees/NAME/``), and the real path of ``info/exclude`` when it is
    shared or a symlink. An invalidated path at or inside one of these (or a directory
    holding one) concerns every set read from ``root``. Empty for a plain repository.
    """
    dirs = git_dirs(root)
    if dirs is None:
        return ()
    gitdir, common = dirs
    inside = os.path.join(root, ".git")
    found: dict[str, None] = {}
    for path in (gitdir, os.path.join(common, "info", "exclude")):
        real = os.path.realpath(path)
        if real != inside and not real.startswith(inside + os.sep):
            found[real] = None
    return tuple(found)


_lock = threading.Lock()
_cache: OrderedDict[str, tuple[tuple[int, int, int, int], TrackedPaths]] = OrderedDict()


def _parse(data: bytes) -> TrackedPaths:
    from dulwich.index import read_index  # imported only when a workspace has an index

    files: set[str] = set()
    dirs: set[str] = set()
    for entry in read_index(io.BytesIO(data)):
        if entry.extended_flags & _SKIP_WORKTREE:
            continue
        name = entry.name
        if name.endswith(b"/"):  # a sparse-index directory entry (always skip-worktree)
            continue
        rel = os.fsdecode(name)
        files.add(rel)
        cut = rel.rfind("/")
        while cut > 0:
            parent = rel[:cut]
            if parent in dirs:
                break
            dirs.add(parent)
            cut = rel.rfind("/", 0, cut)
    return TrackedPaths(frozenset(files), frozenset(dirs))


def load_tracked(root: str) -> tuple[TrackedPaths, str | None]:
    """The paths tracked by the index of the work tree at ``root`` (empty when it is not
    one, or has no index), and a problem (why the index could not be read) or None."""
    dirs = git_dirs(root)
    if dirs is None:
        return EMPTY, None
    path = os.path.join(dirs[0], "index")
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return EMPTY, None
    except OSError as exc:
        return EMPTY, f"the git index cannot be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return EMPTY, f"the git index cannot be read ({exc.strerror or exc})"
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    with _lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == key:
            _cache.move_to_end(path)
    if cached is not None and cached[0] == key:  # unchanged since it was read: not read again
        os.close(fd)
        return cached[1], None
    found = read_file(fd, cap=_MAX_INDEX_BYTES)  # the one capped reader (closes fd)
    if found.problem in ("size", "grew"):
        return EMPTY, f"the git index is over the {_MAX_INDEX_BYTES}-byte cap"
    if found.problem == "special":
        return EMPTY, "the git index is not a regular file"
    if found.problem is not None:
        return EMPTY, f"the git index cannot be read ({_reason(found)})"
    try:
        tracked = _parse(found.data)
    except Exception as exc:  # any malformed index: dulwich raises several kinds
        return EMPTY, f"the git index cannot be parsed ({type(exc).__name__}: {exc})"
    with _lock:
        _cache[path] = (key, tracked)
        _cache.move_to_end(path)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return tracked, None


def _reason(found: FileRead) -> str:
    return reason(found.error) if found.error is not None else "unknown error"
