"""The ``project_context`` format: the workspace's ``.AGENTS/`` directory, for its own layer.

    >>> from harness.instruction_files.discovery.formats._project_context import (
    ...     ProjectContextFormat,
    ... )
    >>> fmt = ProjectContextFormat()
    >>> fmt.layer, sorted(fmt.candidates())
    ('project_context', ['.AGENTS'])
    >>> [fmt.rank(f".AGENTS/{name}") for name in ("overview.md", "glossary.md", "zeta.md")]
    [0, 2, 3]

Its sources feed the ``project_context`` layer, not the instruction files: every build reads
it, whatever the ``formats`` setting, through ``discovery.read_root`` (the workspace root is
its only directory). ``.AGENTS/overview.md``, ``conventions.md`` and ``glossary.md`` come
first, in that order (the model attends most to the start, so the highest-signal files
lead), then every other ``.md`` file alphabetically. Names starting with ``.`` (editor lock
and swap files), files not ending in ``.md`` and subdirectories are not read.

The files are read under the same rules as instruction files, because they are just as
attacker-reachable (a cloned repository can commit ``.AGENTS/overview.md -> ../.git/config``):
``.AGENTS`` is opened relative to the root's descriptor with ``O_NOFOLLOW`` (a symlinked
``.AGENTS`` is not followed); a file symlink is followed only when ``SymlinkPolicy`` allows
its real path, resolved through descriptors; only regular files are read (never a FIFO or a
device, so nothing can hang); a file over the cap is skipped; ``deny_read`` paths are never
opened. Regular (non-symlink) files in ``.AGENTS/`` are the workspace's own context and are
read even when ``.gitignore`` ignores them (a local, untracked ``.AGENTS/`` is a normal
setup). Every file skipped or altered yields a warning; nothing here raises for content.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence

from harness.instruction_files._models import InstructionSource, PassedRule
from harness.instruction_files.discovery._format import Directory, Found, deny_reason
from harness.instruction_files.discovery._rules import RuleFormat
from harness.workspace import (
    DIR_FLAGS,
    FileRead,
    SymlinkRefusal,
    WalkCancelled,
    decode,
    display_path,
    read_file,
    reason,
    refusal_message,
)
from harness.workspace._import_door import ImportDoor, expand_file, revision

__all__ = ["DIRECTORY", "LAYER", "PRIORITY", "ProjectContextFormat", "ordered_names"]

DIRECTORY = ".AGENTS"
LAYER = "project_context"
PRIORITY = ("overview.md", "conventions.md", "glossary.md")


def ordered_names(names: list[str]) -> list[str]:
    """The three priority files first, in their fixed order, then the rest alphabetically."""
    present = set(names)
    head = [name for name in PRIORITY if name in present]
    tail = sorted(name for name in present if name not in PRIORITY)
    return head + tail


class ProjectContextFormat(RuleFormat):
    """``.AGENTS/*.md`` at the workspace root, for the ``project_context`` layer."""

    name = "project_context"
    layer = LAYER
    rules = (DIRECTORY,)
    recursive = False

    def visit(self, directory: Directory) -> None:
        if directory.here.rel or DIRECTORY not in directory.named:
            return  # the root's .AGENTS only
        fd = _opened(directory)
        if fd is None:
            return
        try:
            with os.scandir(fd) as entries:
                names = [e.name for e in entries if e.name.endswith(".md")]
        except OSError as exc:
            directory.warn(f"{DIRECTORY}/", f"cannot be listed ({reason(exc)}); skipped")
            os.close(fd)
            return
        try:
            for name in ordered_names([n for n in names if not n.startswith(".")]):
                if directory.stopping():
                    raise WalkCancelled
                self._take(directory, fd, f"{DIRECTORY}/{name}")
        finally:
            os.close(fd)

    def _take(self, directory: Directory, fd: int, rel: str) -> None:
        deny = directory.policy.deny
        pattern = deny.entry(rel, False) if deny is not None else None
        if pattern is not None:
            directory.warn(rel, deny_reason(pattern))
            return
        read = _read(directory, fd, rel)
        if read is not None:
            directory.keep(rel, read[0], read[1], rank=self.rank(rel))

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        text, altered = decode(found.data)
        text = text.rstrip().lstrip("\r\n")
        if not text.strip():
            return [], ["empty or whitespace only; skipped"]
        text, imported, notes = expand_file(door, found.rel, text)  # the rules of every read
        digest = hashlib.sha256(found.data).hexdigest()
        source = InstructionSource(
            kind="root",
            path=display_path(found.rel),  # printable: it names the unit
            content=text,
            digest=digest,
            depth=0,
            version=revision(digest, imported) or digest,  # the file's revision
            imports=imported,
            format=self.name,
        )
        return [source], [*altered, *notes]

    def rank(self, rel: str) -> int:
        name = rel.rpartition("/")[2]
        return PRIORITY.index(name) if name in PRIORITY else len(PRIORITY)


def _opened(directory: Directory) -> int | None:
    """``.AGENTS`` opened (``O_NOFOLLOW``: a symlink swapped in since the check is refused),
    or None, warned: a symlink, not a directory, denied, unreadable. Vanished: silent."""
    root = directory.here.fd
    try:
        info = os.stat(DIRECTORY, dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return None  # no .AGENTS: an empty layer
    if stat.S_ISLNK(info.st_mode):
        directory.warn(f"{DIRECTORY}/", "is a symlink; not followed")
        return None
    if not stat.S_ISDIR(info.st_mode):
        directory.warn(DIRECTORY, "is not a directory; skipped")
        return None
    deny = directory.policy.deny
    pattern = deny.denied(DIRECTORY, is_dir=True) if deny is not None else None
    if pattern is not None:
        directory.warn(f"{DIRECTORY}/", deny_reason(pattern))
        return None
    try:
        return os.open(DIRECTORY, DIR_FLAGS, dir_fd=root)
    except OSError as exc:
        directory.warn(f"{DIRECTORY}/", f"cannot be listed ({reason(exc)}); skipped")
        return None


def _read(directory: Directory, fd: int, rel: str) -> tuple[FileRead, str] | None:
    """The file ``rel`` of ``.AGENTS`` (open as ``fd``) read and kept open for ``Pins``, with
    its real path; or None, warned."""
    target: str | int = rel.rpartition("/")[2]
    real = rel
    cap = directory.cap
    try:
        if stat.S_ISLNK(os.stat(target, dir_fd=fd, follow_symlinks=False).st_mode):
            followed = directory.policy.open_target(rel)
            if isinstance(followed, SymlinkRefusal):
                directory.warn(rel, f"{refusal_message(followed)}; skipped")
                return None
            if followed.fd is None:
                directory.warn(rel, "is not a regular file; skipped")
                return None
            target, real = followed.fd, followed.real_rel
    except OSError as exc:
        directory.warn(rel, f"cannot be read ({reason(exc)}); skipped")
        return None
    read = read_file(target, cap=cap, dir_fd=fd, keep=True)
    if read.problem is None:
        return read, real
    if read.problem == "special":
        directory.warn(rel, "is not a regular file; skipped")
    elif read.problem == "size":
        directory.warn(rel, f"is {read.size} bytes, over the {cap}-byte cap; skipped")
    elif read.problem == "grew":
        directory.warn(rel, f"grew past the {cap}-byte cap while being read; skipped")
    else:
        assert read.error is not None
        directory.warn(rel, f"cannot be read ({reason(read.error)}); skipped")
    return None
