"""The filesystem walk that finds a workspace's instruction files (synchronous, thread-safe).

``discover(root, settings)`` is blocking code: ``InstructionFiles.load`` runs it in a worker
thread (``anyio.to_thread``) so the event loop never waits on the disk.

Rules, in the order a directory meets them:

- A directory is listed once with ``os.scandir`` (no ``stat`` per entry: the entry type comes
  from the directory listing itself). ``.git``, the ``vendored`` names, directory symlinks and
  directories ignored by the ``.gitignore`` files above them (root and nested, patterns relative
  to their own directory) are never entered. These prunes are policy, not problems: they are
  silent.
- Per directory, the instruction file is the first of ``settings.names`` that is a regular
  file inside the workspace and not ignored by ``.gitignore``. A FIFO, socket, device or
  directory with that name is never opened (its type is known before any open; the open itself
  uses ``O_NONBLOCK | O_NOFOLLOW`` and re-checks with ``fstat`` in case the entry was swapped).
  A file symlink is followed only when ``SymlinkPolicy`` allows its real path: inside the
  workspace, no part of it (its own name included) ``.git`` or a vendored name, and not
  ignored by the workspace's ``.gitignore`` files (root and nested, evaluated along the real
  path exactly as the walk would: an ignored directory on the way ignores everything below
  it; one that exists but cannot be applied refuses the link). Otherwise a committed
  ``docs/AGENTS.md -> ../.env`` would put a gitignored secret into the prompt. The
  ``.AGENTS/`` loader (``harness.project_context``) uses the same policy. Each candidate
  passed over is a warning, and the next name is tried.
- The chosen file is then read whole (at most ``max_bytes``); if it is then rejected (over the
  cap, unreadable, whitespace-only, or the same file as one already loaded) the directory has no
  instruction file: the next name is NOT consulted, and a warning says why.
- One file reachable by two paths (hard link, symlink or bind mount) is loaded once, at its
  first place in precedence order; the other paths are warnings. See ``_Identity`` for how
  "the same file" is decided: an inode number names a file only while the file is alive, so
  the descriptor of each file read stays open until the walk ends (within a process-wide
  budget of descriptors; past it, an identity that can never merge two files is used).
- Text is UTF-8. A leading byte order mark is removed and invalid bytes become U+FFFD; both are
  alterations and so both are warnings. ``digest`` is the sha256 of the bytes as read.

Nothing in a tree can make the walk crash or hang: every ``OSError`` becomes a warning, the walk
is iterative (no recursion limit), symlinked directories (and so symlink loops) are never
entered, and no file is opened before its type is known.

Speed: one ``os.scandir`` per directory (about five system calls: a third of what GNU find
makes), each entry looked at once with set lookups, prunes applied before a directory is
queued, ``.gitignore`` rules evaluated only below a ``.gitignore``, only for directories and
instruction-file names, and memoised by name where no anchored pattern applies. On machines with
CPUs to spare, several threads share the stack of directories (listings release the GIL).
"""

from __future__ import annotations

import codecs
import contextlib
import enum
import hashlib
import os
import re
import stat
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from harness.instruction_files.ignore import IgnoreChain, IgnoreFile
from harness.instruction_files.models import (
    InstructionSet,
    InstructionSource,
    WorkspaceNotFoundError,
)
from harness.instruction_files.settings import InstructionFilesSettings

if sys.platform != "win32":
    import resource

__all__ = [
    "OPEN_FLAGS",
    "DiscoveryCancelled",
    "SymlinkPolicy",
    "SymlinkRefusal",
    "decode",
    "discover",
    "read_capped",
    "resolve_workspace",
    "walk_workspace",
]

_GITIGNORE = ".gitignore"
_GITIGNORE_MAX_BYTES = 1024 * 1024
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""How every workspace file is opened: never blocking (a FIFO), never through a symlink."""
_READ_CHUNK = 1024 * 1024
_BATCH = 32  # directories a walk thread scans before sharing the rest of its subtree

_Job = tuple[str, str, int, IgnoreChain | None]  # (absolute path, relative path, depth, chain)

_Identity = tuple[int, int] | tuple[int, int, bytes] | str
"""What makes two reads "the same file" (equal identities are loaded once).

``(st_dev, st_ino)`` names a file only while the file exists: once the last name and the last
descriptor are gone the number is free, and a file created during the walk (the temporary file
of an editor's atomic save, say) may get it, and would then be dropped as "the same file" as
something it has nothing to do with. Hence:

- ``(dev, ino)``: the descriptor of the file read is held open until the walk ends (one per
  distinct file), so the number cannot be reused meanwhile; equal numbers are then truly one
  file, whatever the route (hard link, symlink, bind mount). This is the normal case.
- Past the descriptor budget (``_PINS``), identities must not merge two files by mistake:
  a file with one link (``st_nlink <= 1``) is named by its real workspace-relative path (the
  only path it has; a symlink resolves to it), a hard-linked file by ``(dev, ino, sha256 of
  its bytes)``, so a reused number with other content is never merged. The residual cost is
  benign: a file bind-mounted at two places, or hard-linked and rewritten between its two
  reads, is loaded twice.

Comparing ``st_ctime_ns`` too would not do: timestamps come from a coarse clock, and a file
freed and a file created within one tick carry the same ctime.
"""


class _PinBudget:
    """Descriptors all walks of this process may hold open at once to pin identities.

    Process-wide, so concurrent loads cannot add up to ``EMFILE``: a quarter of the soft
    ``RLIMIT_NOFILE`` (at most 512), read on first use.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: int | None = None

    def take(self) -> bool:
        with self._lock:
            if self._free is None:
                self._free = _pin_capacity()
            if self._free <= 0:
                return False
            self._free -= 1
            return True

    def give_back(self, count: int) -> None:
        if count:
            with self._lock:
                assert self._free is not None
                self._free += count


def _pin_capacity() -> int:
    soft = 1024
    if sys.platform != "win32":
        with contextlib.suppress(OSError, ValueError):
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY or soft <= 0:
            soft = 4096
    return min(512, soft // 4)


_PINS = _PinBudget()


class DiscoveryCancelled(Exception):
    """The walk was asked to stop (its ``load`` was cancelled); nothing is returned."""


@dataclass(slots=True)
class _Found:
    depth: int
    rel: str
    identity: _Identity
    data: bytes


def resolve_workspace(workspace: str | os.PathLike[str]) -> str:
    """The workspace's real path; ``WorkspaceNotFoundError`` if it is missing or not a dir."""
    given = os.fspath(workspace)
    if not given:
        # realpath("") is the current directory: an unset variable must not mean "walk here".
        raise WorkspaceNotFoundError(
            "workspace is an empty path: pass a directory ('.' for the current one)"
        )
    try:
        real = os.path.realpath(given, strict=True)
    except OSError as exc:
        raise WorkspaceNotFoundError(
            f"workspace {given!r} does not exist ({_reason(exc)}): pass the path of an "
            "existing directory"
        ) from exc
    if not os.path.isdir(real):
        raise WorkspaceNotFoundError(
            f"workspace {given!r} is not a directory: pass the directory that holds the "
            "project (its root AGENTS.md, if any, lives there)"
        )
    return real


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def escape_control(found: re.Match[str]) -> str:
    """C0 controls and DEL as ``\\xNN``; C1 controls (U+0080-U+009F) as ``\\u00NN``, since
    ``\\x80``-``\\xff`` already name undecodable bytes."""
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character escaped (see ``escape_control``): for one-line
    report headers that echo caller input."""
    return _CONTROL.sub(escape_control, text) if _CONTROL.search(text) else text


def display_path(rel: str) -> str:
    """A printable, unambiguous path, so every file gets its own: undecodable bytes of a name
    are shown as ``\\xNN``; control characters escaped too (a name is hostile input: an escape
    sequence must not reach a terminal, a newline must not forge a line); and a backslash is
    shown doubled (a directory literally named ``\\xff`` must not read like the byte 0xFF)."""
    if "\\" in rel:
        rel = rel.replace("\\", "\\\\")
    if _CONTROL.search(rel):
        rel = _CONTROL.sub(escape_control, rel)
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return rel


def kind_of(mode: int) -> str:
    """How a warning names a file that is not a regular one (``a FIFO``, ...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_capped(fd: int, size: int, cap: int) -> bytes:
    """The bytes of the regular file open as ``fd`` (``fstat`` said ``size``), read to its
    end or to one byte over ``cap``: a result longer than ``cap`` means "over the cap".

    One read of ``size + 1`` bytes normally returns the whole file and proves EOF; a file
    that grows meanwhile is read on, in large chunks, up to one byte over the cap.
    """
    chunks: list[bytes] = []
    total = 0
    want = size + 1
    while total <= cap:
        chunk = os.read(fd, min(want, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want:
            break
        want = _READ_CHUNK
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@dataclass(frozen=True, slots=True)
class SymlinkRefusal:
    """Why a symlink's resolved target must not be read (each caller words its warning).

    ``kind``: ``"outside"`` (not inside the workspace), ``"workspace"`` (the workspace
    directory itself), ``"pruned"`` (``part`` is the ``.git`` or vendored name on its path),
    ``"ignored"`` (``part`` is the first workspace-relative path on the way that
    ``.gitignore`` ignores, with a trailing ``/`` for a directory) or ``"unchecked"``
    (``part`` is a ``.gitignore`` on the way that exists but cannot be applied, ``reason``
    says why: the check fails closed). ``target`` is the workspace-relative real path
    (``"/"``-separated), empty for the first two kinds.
    """

    kind: Literal["outside", "workspace", "pruned", "ignored", "unchecked"]
    target: str = ""
    part: str = ""
    reason: str = ""


class SymlinkPolicy:
    """Whether a file symlink's resolved target may be read: one rule for every reader of
    workspace files (instruction files, ``.AGENTS/``).

    Refused: a real path outside the workspace or the workspace itself, any part of it
    (the file's own name included) named ``.git`` or a ``prune`` name, or ignored by the
    ``.gitignore`` files on its way down from the root, evaluated exactly as the walk
    evaluates them (each directory's rules apply below it, deeper files win, an ignored
    directory hides all it holds). A ``.gitignore`` that is a symlink or a special file is
    not applied (as in git and the walk); one that exists but cannot be read or is over
    ``_GITIGNORE_MAX_BYTES`` refuses the target (fail closed: it might have ignored it).
    Each ``.gitignore`` is read at most once per policy and only along symlink targets, so
    a tree without symlinks costs nothing. Safe to share between threads (a racing miss
    reads one file twice, with the same result).
    """

    def __init__(self, root: str, prune: Iterable[str], *, gitignores: bool = True) -> None:
        self.root = root
        self.prefix = root if root.endswith(os.sep) else root + os.sep
        self.prune = frozenset((*prune, ".git"))
        self.gitignores = gitignores  # False: .gitignore is an instruction-file name
        self._ignores: dict[str, IgnoreFile | SymlinkRefusal | None] = {}  # dir -> rules

    def refusal(self, real: str) -> SymlinkRefusal | None:
        """Why the real (resolved, absolute) path ``real`` must not be read, or None."""
        if real == self.root:
            return SymlinkRefusal("workspace")
        if not real.startswith(self.prefix):
            return SymlinkRefusal("outside")
        real_rel = real[len(self.prefix) :].replace(os.sep, "/")
        parts = real_rel.split("/")
        pruned = next((part for part in parts if part in self.prune), None)
        if pruned is not None:  # e.g. AGENTS.md -> .git/config: never read what is pruned
            return SymlinkRefusal("pruned", real_rel, pruned)
        if not self.gitignores:
            return None
        chain: IgnoreChain | None = None
        parent = ""
        for index, name in enumerate(parts):
            ignore = self._gitignore(parent)
            if isinstance(ignore, SymlinkRefusal):
                return SymlinkRefusal("unchecked", real_rel, ignore.part, ignore.reason)
            if ignore is not None:
                chain = IgnoreChain((ignore,)) if chain is None else chain.extended(ignore)
            rel = f"{parent}/{name}" if parent else name
            is_dir = index < len(parts) - 1
            if chain is not None and chain.ignored(rel, name, is_dir):
                return SymlinkRefusal("ignored", real_rel, rel + "/" if is_dir else rel)
            parent = rel
        return None

    def _gitignore(self, rel: str) -> IgnoreFile | SymlinkRefusal | None:
        """The rules of directory ``rel``'s ``.gitignore``, None if there are none, or (as an
        ``"unchecked"`` refusal) why it exists but cannot be applied."""
        try:
            return self._ignores[rel]
        except KeyError:
            pass
        shown = f"{rel}/{_GITIGNORE}" if rel else _GITIGNORE
        path = self.prefix + shown.replace("/", os.sep)
        found: IgnoreFile | SymlinkRefusal | None = None
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            found = SymlinkRefusal("unchecked", "", shown, f"cannot be examined ({_reason(exc)})")
            info = None
        if info is not None and stat.S_ISREG(info.st_mode):
            found = self._parse(rel, path, shown)
        self._ignores[rel] = found
        return found

    @staticmethod
    def _parse(rel: str, path: str, shown: str) -> IgnoreFile | SymlinkRefusal | None:
        data = read_gitignore(path)
        if data is None:  # swapped for a special file since lstat: git would not read it
            return None
        if isinstance(data, str):
            return SymlinkRefusal("unchecked", "", shown, data)
        parsed, _ = IgnoreFile.parse(rel, data)
        return None if parsed.empty else parsed


def read_gitignore(path: str) -> bytes | str | None:
    """A ``.gitignore``'s bytes; None if it is not a regular file after all; or, as a string,
    why it cannot be applied (unreadable, or over the cap). The walk and the symlink policy
    both read through here, so they agree on which files apply."""
    cap = _GITIGNORE_MAX_BYTES
    try:
        fd = os.open(path, OPEN_FLAGS)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            data = read_capped(fd, info.st_size, cap)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"cannot be read ({_reason(exc)})"
    if len(data) > cap:
        return f"is over the {cap}-byte cap"
    return data


class _Unknown(enum.Enum):
    """A ``.gitignore`` that exists but cannot be applied."""

    UNKNOWN = enum.auto()


_UNKNOWN: Final = _Unknown.UNKNOWN


def _symlink_warning(refusal: SymlinkRefusal) -> str:
    """The walk's warning for a refused instruction-file symlink."""
    if refusal.kind in ("outside", "workspace"):
        return "skipped: a symlink whose real path lies outside the workspace"
    if refusal.kind == "pruned":
        return f"skipped: a symlink into {refusal.part}/, which is never read"
    target, part = display_path(refusal.target), display_path(refusal.part)
    if refusal.kind == "ignored":  # e.g. AGENTS.md -> .env: a gitignored file is private
        return (
            f"skipped: a symlink to {target}, and {part} is ignored by .gitignore "
            "(gitignored files are never read)"
        )
    return (
        f"skipped: a symlink to {target}, and {part} {refusal.reason}, so whether it "
        "ignores the target cannot be checked"
    )


class _Walk:
    """One walk of one workspace; shared by its threads (lists are appended under the GIL)."""

    def __init__(
        self, root: str, settings: InstructionFilesSettings, stop: threading.Event | None
    ) -> None:
        self.root = root
        self.root_prefix = root if root.endswith(os.sep) else root + os.sep
        self.names = settings.names
        self.max_bytes = settings.max_bytes
        self.prune = frozenset((*settings.vendored, ".git"))
        self.special = frozenset((*settings.names, _GITIGNORE))
        self.stop = stop
        self.found: list[_Found] = []
        self.warnings: list[tuple[str, str]] = []
        self.shadowing: dict[str, list[str]] = {}  # chosen file -> the files it shadows
        self.pinned: dict[tuple[int, int], int] = {}  # identity -> descriptor held open
        self.pin_lock = threading.Lock()
        self.symlinks = SymlinkPolicy(root, self.prune, gitignores=_GITIGNORE not in self.names)

    def warn(self, rel: str, reason: str) -> None:
        self.warnings.append((rel, reason))

    # -- one directory ---------------------------------------------------------------------

    def drain(self, stack: list[_Job], budget: int) -> None:
        """Scan directories popped from ``stack``, pushing their subdirectories back onto it,
        until it is empty or ``budget`` directories were scanned.

        This is the hot loop of every walk (one listing per directory, set lookups per entry),
        kept in one function with local names; rarer work (instruction files, ``.gitignore``)
        is delegated.
        """
        special, prune, stop = self.special, self.prune, self.stop
        scandir, pop, push = os.scandir, stack.pop, stack.append
        while stack and budget > 0:
            budget -= 1
            if stop is not None and stop.is_set():
                raise DiscoveryCancelled
            path, rel, depth, chain = pop()
            subdirs: list[str] = []
            named: dict[str, os.DirEntry[str]] | None = None
            try:
                with scandir(path) as entries:
                    for entry in entries:
                        name = entry.name
                        if name in special:
                            if named is None:
                                named = {}
                            named[name] = entry
                        elif entry.is_dir(follow_symlinks=False) and name not in prune:
                            subdirs.append(name)
            except OSError as exc:
                self.warn(rel or ".", f"directory skipped: it cannot be read ({_reason(exc)})")
                continue
            if named is not None:
                chain = self._named_entries(path, rel, depth, chain, named, subdirs)
            if not subdirs:
                continue
            prefix = rel + "/" if rel else ""
            if chain is not None:
                subdirs = chain.kept_dirs(prefix, subdirs)
            depth += 1
            for name in subdirs:
                push((f"{path}/{name}", prefix + name, depth, chain))

    def _named_entries(
        self,
        path: str,
        rel: str,
        depth: int,
        chain: IgnoreChain | None,
        named: dict[str, os.DirEntry[str]],
        subdirs: list[str],
    ) -> IgnoreChain | None:
        prefix = rel + "/" if rel else ""
        for name, named_entry in named.items():
            # A directory that happens to carry an instruction-file name is walked like any
            # other directory (it is never opened as a file).
            if name not in self.prune and named_entry.is_dir(follow_symlinks=False):
                subdirs.append(name)
        gitignore = named.get(_GITIGNORE)
        if gitignore is not None and _GITIGNORE not in self.names:
            applied = self._gitignore(gitignore, prefix + _GITIGNORE, rel, chain)
            if applied is _UNKNOWN:
                # What it ignores is unknown, so nothing it governs may be read: fail closed.
                subdirs.clear()
                return chain
            chain = applied
        for index, name in enumerate(self.names):
            entry = named.get(name)
            if entry is None:
                continue
            file_rel = prefix + name
            if chain is not None and chain.ignored(file_rel, name, False):
                self.warn(file_rel, "skipped: ignored by .gitignore")
                continue
            eligible = self._eligible(entry, file_rel)
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
            self._read(*eligible, file_rel, depth)
            break
        return chain

    def _eligible(self, entry: os.DirEntry[str], file_rel: str) -> tuple[str, str] | None:
        """(path to open, its real workspace-relative path) if ``entry`` is a regular file
        inside the workspace that may be read, else warn."""
        try:
            if not entry.is_symlink():
                if entry.is_file(follow_symlinks=False):
                    return entry.path, file_rel
                mode = entry.stat(follow_symlinks=False).st_mode
                self.warn(file_rel, f"skipped: {kind_of(mode)}, not a regular file")
                return None
            real = os.path.realpath(entry.path)
            refusal = self.symlinks.refusal(real)
            if refusal is not None:
                self.warn(file_rel, _symlink_warning(refusal))
                return None
            real_rel = real[len(self.root_prefix) :].replace(os.sep, "/")
            mode = os.stat(real).st_mode
        except OSError as exc:
            self.warn(file_rel, f"skipped: it cannot be examined ({_reason(exc)})")
            return None
        if not stat.S_ISREG(mode):
            self.warn(file_rel, f"skipped: a symlink to {kind_of(mode)}, not a regular file")
            return None
        return real, real_rel

    def _identity(self, fd: int, info: os.stat_result, real_rel: str, data: bytes) -> _Identity:
        """The identity of the file open as ``fd`` (see ``_Identity``); may keep ``fd`` open
        (it is then in ``self.pinned`` and closed by ``release``)."""
        key = (info.st_dev, info.st_ino)
        with self.pin_lock:
            if key in self.pinned:  # pinned: this number still names that very file
                os.close(fd)
                return key
            if _PINS.take():
                self.pinned[key] = fd
                return key
        os.close(fd)
        if info.st_nlink <= 1:
            return real_rel
        return (info.st_dev, info.st_ino, hashlib.sha256(data).digest())

    def release(self) -> None:
        """Close the descriptors held to pin identities (the walk is over)."""
        with self.pin_lock:
            held = list(self.pinned.values())
            self.pinned.clear()
        for fd in held:
            with contextlib.suppress(OSError):  # ours and open: cannot fail, but never raise
                os.close(fd)
        _PINS.give_back(len(held))

    def _read(self, target: str, real_rel: str, file_rel: str, depth: int) -> None:
        try:
            fd = os.open(target, OPEN_FLAGS)
        except OSError as exc:
            self.warn(file_rel, f"skipped: it cannot be opened ({_reason(exc)})")
            return
        owned = True  # whether this function must close fd (``_identity`` takes it over)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.warn(
                    file_rel, f"skipped: {kind_of(info.st_mode)} (it changed during the walk)"
                )
                return
            if info.st_size > self.max_bytes:
                self._over_cap(file_rel, info.st_size)
                return
            data = read_capped(fd, info.st_size, self.max_bytes)
            if len(data) > self.max_bytes:
                self._over_cap(file_rel, len(data))
                return
            owned = False
            identity = self._identity(fd, info, real_rel, data)
        except OSError as exc:
            self.warn(file_rel, f"skipped: it cannot be read ({_reason(exc)})")
            return
        finally:
            if owned:
                os.close(fd)
        self.found.append(_Found(depth, file_rel, identity, data))

    def _over_cap(self, file_rel: str, size: int) -> None:
        self.warn(
            file_rel,
            f"skipped: {size} bytes, over the max_bytes cap of {self.max_bytes} "
            "(raise instruction_files.max_bytes to load it)",
        )

    def _gitignore(
        self,
        entry: os.DirEntry[str],
        gitignore_rel: str,
        rel: str,
        chain: IgnoreChain | None,
    ) -> IgnoreChain | _Unknown | None:
        """The chain with this ``.gitignore`` applied, or ``_UNKNOWN`` (warned) when it exists
        but cannot be read or is over the cap."""
        try:
            if not entry.is_file(follow_symlinks=False):
                if entry.is_symlink():  # git does not follow a symlinked .gitignore either
                    self.warn(gitignore_rel, "not applied: a symlink (git does not follow it)")
                return chain
        except OSError as exc:
            data: bytes | str | None = f"cannot be examined ({_reason(exc)})"
        else:
            data = read_gitignore(entry.path)
        if data is None:  # swapped for a special file meanwhile: git would not read it either
            return chain
        if isinstance(data, str):
            self.warn(
                gitignore_rel,
                f"{data}: nothing in {rel or '.'!r} is read, since what it ignores is unknown",
            )
            return _UNKNOWN
        ignore, problems = IgnoreFile.parse(rel, data)
        for problem in problems:
            self.warn(gitignore_rel, f"{problem}; the line is ignored, as git does")
        if ignore.empty:
            return chain
        return IgnoreChain((ignore,)) if chain is None else chain.extended(ignore)

    # -- the whole tree --------------------------------------------------------------------

    def run(self, threads: int) -> None:
        stack: list[_Job] = [(self.root, "", 0, None)]
        if threads <= 1:
            self.drain(stack, sys.maxsize)
        else:
            _Pool(self, stack, threads).run()


class _Pool:
    """Threads sharing one stack of directories until every directory is done.

    A worker takes one directory, drains up to ``_BATCH`` directories of its subtree on a
    private stack (no lock per directory), then hands what is left back to the shared stack.
    ``outstanding`` counts directories not yet scanned (shared or held by a worker); the walk
    ends when it reaches zero. ``list.pop``/``list.extend`` are atomic under the GIL; the
    condition guards only the counter and the idle hand-off.
    """

    def __init__(self, walk: _Walk, stack: list[_Job], threads: int) -> None:
        self.walk = walk
        self.stack = stack
        self.threads = threads
        self.outstanding = len(stack)
        self.idle = 0
        self.failed: BaseException | None = None
        self.cond = threading.Condition()

    def run(self) -> None:
        helpers = [
            threading.Thread(target=self.work, name=f"harness-discovery-{n}", daemon=True)
            for n in range(self.threads - 1)
        ]
        for helper in helpers:
            helper.start()
        self.work()
        for helper in helpers:
            helper.join()
        if self.failed is not None:
            raise self.failed

    def work(self) -> None:
        stack = self.stack
        cond = self.cond
        drain = self.walk.drain
        while True:
            if self.failed is not None:  # another thread failed: the walk's result is moot
                return
            try:
                job = stack.pop()
            except IndexError:
                with cond:
                    while not stack and self.outstanding and self.failed is None:
                        self.idle += 1
                        cond.wait()
                        self.idle -= 1
                    if not self.outstanding or self.failed is not None:
                        cond.notify_all()
                        return
                continue
            found = [job]
            try:
                drain(found, _BATCH)
            except BaseException as exc:
                with cond:
                    if self.failed is None:
                        self.failed = exc
                    cond.notify_all()
                return
            with cond:
                stack.extend(found)
                self.outstanding += len(found) - 1
                if self.idle:
                    if not self.outstanding:
                        cond.notify_all()
                    elif found:
                        cond.notify(len(found))


def _default_threads() -> int:
    """One thread on a machine with two CPUs or fewer, else four.

    Listings release the GIL, but handing it back and forth costs a wake-up per system call;
    on a 2-CPU machine that costs more than the overlap gains (measured: 1 thread 266 ms,
    2 threads 283 ms on the 20,000-directory benchmark tree), so threads are used only where
    there are CPUs to spare (and they pay most where listings wait on a cold disk).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 1 if cpus <= 2 else 4


def discover(
    workspace: str | os.PathLike[str],
    settings: InstructionFilesSettings | None = None,
    *,
    stop: threading.Event | None = None,
) -> InstructionSet:
    """Walk ``workspace`` and return its instruction files in ascending precedence.

    Blocking. ``stop`` (set from another thread) makes the walk raise ``DiscoveryCancelled``
    soon after. Raises ``WorkspaceNotFoundError`` for a missing workspace; every other problem
    is a warning in the result.
    """
    settings = settings if settings is not None else InstructionFilesSettings()
    return walk_workspace(resolve_workspace(workspace), settings, stop)


def walk_workspace(
    root: str, settings: InstructionFilesSettings, stop: threading.Event | None = None
) -> InstructionSet:
    """``discover`` for a root already resolved by ``resolve_workspace``."""
    walk = _Walk(root, settings, stop)
    try:
        walk.run(settings.walk_threads or _default_threads())
    finally:
        walk.release()
    return _assemble(walk)


def _assemble(walk: _Walk) -> InstructionSet:
    """Sort what the threads found, drop second paths to one file, and decode."""
    sources: list[InstructionSource] = []
    first_path: dict[_Identity, str] = {}
    warnings = list(walk.warnings)
    for found in sorted(walk.found, key=lambda item: (item.depth, item.rel)):
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
        sources.append(
            InstructionSource(
                kind="root" if found.depth == 0 else "directory",
                path=rel,
                content=content,
                digest=hashlib.sha256(found.data).hexdigest(),
                depth=found.depth,
            )
        )
    warnings.sort(key=lambda warning: warning[0])  # stable: a file's notes keep their order
    return InstructionSet(
        sources=tuple(sources),
        warnings=tuple(
            f"{display_path(path)}: {reason}{_shadow_note(walk, path, reason)}"
            for path, reason in warnings
        ),
    )


def _shadow_note(walk: _Walk, rel: str, reason: str) -> str:
    """For a rejected file that was chosen over others in its directory: which went unread."""
    shadowed = walk.shadowing.get(rel)
    if not shadowed or not reason.startswith("skipped"):
        return ""
    names = ", ".join(display_path(other) for other in shadowed)
    return f"; it still shadows {names}, which is not read (one file per directory)"


def decode(data: bytes) -> tuple[str, list[str]]:
    """UTF-8 text with a leading BOM removed and invalid bytes replaced; notes each change."""
    notes: list[str] = []
    offset = 0
    if data.startswith(codecs.BOM_UTF8):
        offset = len(codecs.BOM_UTF8)
        data = data[offset:]
        notes.append("altered: leading UTF-8 byte order mark removed")
    try:
        return data.decode("utf-8"), notes
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "replace")
        notes.append(
            f"altered: invalid UTF-8 replaced with U+FFFD (first at byte {exc.start + offset})"
        )
        return text, notes
