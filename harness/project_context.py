"""The project_context layer: the workspace's ``.AGENTS/`` directory, read safely.

``.AGENTS/overview.md``, ``conventions.md`` and ``glossary.md`` come first, in that order
(the model attends most to the start, so the highest-signal files lead), then every other
``.md`` file alphabetically. Each file becomes one ``Unit`` whose id and source are its
workspace-relative path, so the rendered prompt cites it and the report names it.

A workspace without ``.AGENTS/`` simply has an empty layer: opting in is optional. The
files are read under the same rules as instruction files, because they are just as
attacker-reachable: a symlinked ``.AGENTS`` directory is not followed, a file whose real
path lies outside the workspace is not read, only regular files are read (never a FIFO or a
device, so nothing can hang), files over the size cap are skipped, one file reachable by two
names is read once, and text is UTF-8 with a leading BOM removed and invalid bytes replaced
by U+FFFD. Every file skipped or altered yields a warning; nothing here raises for content.
Names starting with ``.`` (editor lock and swap files) and files not ending in ``.md`` are
ignored.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from harness.prompt_assembler import Unit

__all__ = ["DIRECTORY", "PRIORITY", "ProjectContext", "load_project_context"]

DIRECTORY = ".AGENTS"
PRIORITY = ("overview.md", "conventions.md", "glossary.md")
_BOM = b"\xef\xbb\xbf"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


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


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _read_capped(path: str, cap: int) -> tuple[bytes | None, str | None, tuple[int, int] | None]:
    """Read a regular file of at most ``cap`` bytes: ``(data, problem, identity)``."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc}); skipped", None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file; skipped", None
        if info.st_size > cap:
            return None, f"is {info.st_size} bytes, over the {cap}-byte cap; skipped", None
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(65536, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            return None, f"grew past the {cap}-byte cap while being read; skipped", None
        return b"".join(chunks), None, (info.st_dev, info.st_ino)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc}); skipped", None
    finally:
        os.close(fd)


def load_project_context(
    workspace: str | os.PathLike[str], *, max_file_bytes: int = 65536
) -> ProjectContext:
    """Read ``WORKSPACE/.AGENTS/*.md`` into units (blocking I/O: run it in a worker thread)."""
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

    units: list[Unit] = []
    seen: dict[tuple[int, int], str] = {}
    for name in ordered_names(names):
        relative = f"{DIRECTORY}/{name}"
        real = os.path.realpath(os.path.join(directory, name))
        if not _inside(real, root):
            warnings.append(f"{relative}: its real path is outside the workspace; not read")
            continue
        data, problem, identity = _read_capped(real, max_file_bytes)
        if data is None or identity is None:
            warnings.append(f"{relative}: {problem}")
            continue
        if identity in seen:
            warnings.append(f"{relative}: same file as {seen[identity]}; loaded once")
            continue
        seen[identity] = relative
        if data.startswith(_BOM):
            data = data[len(_BOM) :]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
            warnings.append(f"{relative}: invalid UTF-8 bytes replaced with U+FFFD")
        text = text.rstrip().lstrip("\r\n")
        if not text.strip():
            warnings.append(f"{relative}: empty or whitespace only; skipped")
            continue
        units.append(Unit(id=relative, text=text, source=relative))
    return ProjectContext(tuple(units), tuple(warnings))
