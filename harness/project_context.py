"""The project_context layer: the workspace's ``.AGENTS/`` directory, read safely.

``.AGENTS/overview.md``, ``conventions.md`` and ``glossary.md`` come first, in that order
(the model attends most to the start, so the highest-signal files lead), then every other
``.md`` file alphabetically. Each file becomes one ``Unit`` whose id and source are its
workspace-relative path, so the rendered prompt cites it and the report names it.

A workspace without ``.AGENTS/`` simply has an empty layer: opting in is optional. The
files are read under the same rules as instruction files, because they are just as
attacker-reachable (a cloned repository can commit ``.AGENTS/overview.md -> ../.git/config``):
a symlinked ``.AGENTS`` directory is not followed; a file symlink is followed only when its
real path lies inside the workspace, not under ``.git`` or a vendored directory (the
``[instruction_files] vendored`` names), and not ignored by the workspace's ``.gitignore``
files (matched by the instruction-files ignore matcher, one path component at a time as git
does); only regular files are read (never a FIFO or a device, so nothing can hang), files
over the size cap are skipped, one file reachable by two names is read once, and text is
decoded by the instruction-files decoder (UTF-8, a leading BOM removed, invalid bytes
replaced by U+FFFD). Every file skipped or altered yields a warning; nothing here raises for
content. Names starting with ``.`` (editor lock and swap files) and files not ending in
``.md`` are ignored. Regular (non-symlink) files in ``.AGENTS/`` are the workspace's own
context and are read even when ``.gitignore`` ignores them (a local, untracked ``.AGENTS/``
is a normal setup).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from harness.instruction_files import InstructionFilesSettings
from harness.instruction_files.discovery import (
    OPEN_FLAGS,
    SymlinkPolicy,
    SymlinkRefusal,
    decode,
    display_path,
    read_capped,
)
from harness.prompt_assembler import Unit

__all__ = ["DIRECTORY", "PRIORITY", "ProjectContext", "load_project_context"]

DIRECTORY = ".AGENTS"
PRIORITY = ("overview.md", "conventions.md", "glossary.md")


@dataclass(frozen=True, slots=True)
class ProjectContext:
    """The ``.AGENTS/`` units in layer order, and why any file was skipped or altered."""

    units: tuple[Unit, ...] = ()
    warnings: tuple[str, ...] = ()


def ordered_names(names: list[str]) -> list[str]:
    """The three priority files first, in their fixed order, then the rest alphabetically."""
    present = set(names)
    head = [name for name in PRIORITY if name in present]
    tail = sorted(name for name in present if name not in PRIORITY)
    return head + tail


def _refusal_warning(refusal: SymlinkRefusal) -> str:
    """This layer's wording of why a symlink's target is not read."""
    if refusal.kind == "workspace":
        return "a symlink to the workspace itself, not a regular file; skipped"
    if refusal.kind == "outside":
        return "its real path is outside the workspace; not read"
    if refusal.kind == "pruned":  # e.g. overview.md -> ../.git/config
        return f"a symlink into {refusal.part}/, which is never read; skipped"
    if refusal.kind == "ignored":
        ignored = refusal.part.removesuffix("/")
        return f"a symlink to {ignored}, which .gitignore ignores; not read"
    return f"{refusal.part} {refusal.reason}, so the symlink cannot be checked; skipped"


_Identity = tuple[int, int, bytes]


def _read_capped(path: str, cap: int) -> tuple[bytes | None, str | None, _Identity | None]:
    """Read a regular file of at most ``cap`` bytes: ``(data, problem, identity)``.

    The identity is (device, inode, sha256 of the bytes): the file is closed before the next
    one is opened, so an atomic save meanwhile may hand its inode number to another file; with
    the content in the key, two different files are never merged as "the same file".
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc}); skipped", None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file; skipped", None
        if info.st_size > cap:
            return None, f"is {info.st_size} bytes, over the {cap}-byte cap; skipped", None
        data = read_capped(fd, info.st_size, cap)
        if len(data) > cap:
            return None, f"grew past the {cap}-byte cap while being read; skipped", None
        return data, None, (info.st_dev, info.st_ino, hashlib.sha256(data).digest())
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc}); skipped", None
    finally:
        os.close(fd)


def load_project_context(
    workspace: str | os.PathLike[str],
    *,
    max_file_bytes: int = 65536,
    vendored: Iterable[str] | None = None,
) -> ProjectContext:
    """Read ``WORKSPACE/.AGENTS/*.md`` into units (blocking I/O: run it in a worker thread).

    ``vendored`` are the directory names a symlink may not point into (besides ``.git``);
    default: those of ``InstructionFilesSettings``. ``Harness`` passes its config's.
    """
    if max_file_bytes < 1:
        raise ValueError("max_file_bytes must be at least 1")
    root = os.path.realpath(workspace)
    directory = os.path.join(root, DIRECTORY)
    warnings: list[str] = []
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return ProjectContext()
    except OSError as exc:
        return ProjectContext((), (f"{DIRECTORY}/: cannot be read ({exc.strerror}); skipped",))
    if stat.S_ISLNK(info.st_mode):
        return ProjectContext((), (f"{DIRECTORY}/: is a symlink; not followed",))
    if not stat.S_ISDIR(info.st_mode):
        return ProjectContext((), (f"{DIRECTORY}: is not a directory; skipped",))
    try:
        with os.scandir(directory) as entries:
            names = [
                entry.name
                for entry in entries
                if entry.name.endswith(".md") and not entry.name.startswith(".")
            ]
    except OSError as exc:
        return ProjectContext((), (f"{DIRECTORY}/: cannot be listed ({exc.strerror}); skipped",))

    rules = SymlinkPolicy(
        root, InstructionFilesSettings().vendored if vendored is None else vendored
    )
    units: list[Unit] = []
    seen: dict[_Identity, str] = {}
    for name in ordered_names(names):
        relative = display_path(f"{DIRECTORY}/{name}")  # printable: it names the unit
        target = os.path.join(directory, name)
        try:
            is_link = stat.S_ISLNK(os.lstat(target).st_mode)
        except OSError as exc:
            warnings.append(f"{relative}: cannot be examined ({exc.strerror or exc}); skipped")
            continue
        if is_link:
            target = os.path.realpath(target)
            refused = rules.refusal(target)
            if refused is not None:
                warnings.append(f"{relative}: {_refusal_warning(refused)}")
                continue
        data, problem, identity = _read_capped(target, max_file_bytes)
        if data is None or identity is None:
            warnings.append(f"{relative}: {problem}")
            continue
        if identity in seen:
            warnings.append(f"{relative}: same file as {seen[identity]}; loaded once")
            continue
        seen[identity] = relative
        text, altered = decode(data)
        text = text.rstrip().lstrip("\r\n")
        if not text.strip():
            warnings.append(f"{relative}: empty or whitespace only; skipped")
            continue
        warnings.extend(f"{relative}: {note}" for note in altered)
        units.append(Unit(id=relative, text=text, source=relative))
    return ProjectContext(tuple(units), tuple(warnings))
