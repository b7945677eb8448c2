"""The project_context layer: the workspace's ``.AGENTS/`` directory, read safely.

    >>> import os, tempfile
    >>> from harness._project_context import load_project_context
    >>> ws = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(ws, ".AGENTS"))
    >>> for name in ("glossary.md", "overview.md"):
    ...     with open(os.path.join(ws, ".AGENTS", name), "w") as out:
    ...         _ = out.write(f"{name} text\\n")
    >>> [unit.id for unit in load_project_context(ws).units]
    ['.AGENTS/overview.md', '.AGENTS/glossary.md']

``.AGENTS/overview.md``, ``conventions.md`` and ``glossary.md`` come first, in that order
(the model attends most to the start, so the highest-signal files lead), then every other
``.md`` file alphabetically. Each file becomes one ``Unit`` whose id and source are its
workspace-relative path, so the rendered prompt cites it and the report names it.

A workspace without ``.AGENTS/`` simply has an empty layer: opting in is optional. The
files are read under the same rules as instruction files, because they are just as
attacker-reachable (a cloned repository can commit ``.AGENTS/overview.md -> ../.git/config``),
and read only through ``harness.workspace``: ``.AGENTS`` is opened relative to the root's
descriptor with ``O_NOFOLLOW`` (a symlinked ``.AGENTS`` is not followed); a file symlink is
followed only when ``SymlinkPolicy`` allows its real path (inside the workspace, not under
``.git`` or a vendored directory (the ``[instruction_files] vendored`` names), not ignored by
the workspace's ``.gitignore`` files), resolved through descriptors; only regular files are
read (``read_file``: never a FIFO or a device, so nothing can hang), files over the size cap
are skipped, one file reachable by two names is read once (``Pins``), and text is decoded by
``decode`` (UTF-8, a leading BOM removed, invalid bytes replaced by U+FFFD). Every warning is
escaped by the one escaper (``printable``/``display_path``). Every file skipped or altered
yields a warning; nothing here raises for content. Names starting with ``.`` (editor lock and
swap files) and files not ending in ``.md`` are ignored. Regular (non-symlink) files in
``.AGENTS/`` are the workspace's own context and are read even when ``.gitignore`` ignores
them (a local, untracked ``.AGENTS/`` is a normal setup).
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from harness.errors import ArgumentError
from harness.prompt_assembler import Unit
from harness.workspace import (
    DIR_FLAGS,
    FileRead,
    Identity,
    Pins,
    SymlinkPolicy,
    SymlinkRefusal,
    WalkCancelled,
    decode,
    display_path,
    printable,
    read_file,
    reason,
    refusal_message,
)
from harness.workspace._import_door import ImportDoor, expand_file, revision
from harness.workspace._vendored import DEFAULT_VENDORED
from harness.workspace.deny import DEFAULT_DENY_READ, DenyRules, deny_warning

__all__ = ["DIRECTORY", "PRIORITY", "ProjectContext", "load_project_context"]

DIRECTORY = ".AGENTS"
PRIORITY = ("overview.md", "conventions.md", "glossary.md")


@dataclass(frozen=True, slots=True)
class ProjectContext:
    """The ``.AGENTS/`` units in layer order, and why any file was skipped or altered.

    ``imports`` maps the id of each unit that has ``@path`` imports to what it imported
    (workspace-relative path, sha256), as ``InstructionSource.imports``.
    """

    units: tuple[Unit, ...] = ()
    warnings: tuple[str, ...] = ()
    imports: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


def ordered_names(names: list[str]) -> list[str]:
    """The three priority files first, in their fixed order, then the rest alphabetically."""
    present = set(names)
    head = [name for name in PRIORITY if name in present]
    tail = sorted(name for name in present if name not in PRIORITY)
    return head + tail


def _problem(read: FileRead, cap: int) -> str:
    """This layer's wording of why ``read_file`` did not return a file."""
    if read.problem == "special":
        return "is not a regular file; skipped"
    if read.problem == "size":
        return f"is {read.size} bytes, over the {cap}-byte cap; skipped"
    if read.problem == "grew":
        return f"grew past the {cap}-byte cap while being read; skipped"
    assert read.error is not None
    return f"cannot be read ({reason(read.error)}); skipped"


def load_project_context(
    workspace: str | os.PathLike[str],
    *,
    max_file_bytes: int = 65536,
    vendored: Iterable[str] | None = None,
    deny_read: Iterable[str] | None = None,
    stop: threading.Event | None = None,
) -> ProjectContext:
    """Read ``WORKSPACE/.AGENTS/*.md`` into units (blocking I/O: run it in a worker thread).

    ``vendored`` are the directory names a symlink may not point into (besides ``.git``);
    default: ``harness.workspace._vendored.DEFAULT_VENDORED``. ``Harness`` passes its config's. Once
    ``stop`` is set (from another thread) the read raises ``WalkCancelled`` soon after.
    ``deny_read``: ``.gitignore`` patterns of paths never opened (a ``.AGENTS/`` file, an
    import, a symlink's target); default ``harness.workspace.deny.DEFAULT_DENY_READ``.
    """
    if max_file_bytes < 1:
        raise ArgumentError("max_file_bytes must be at least 1")
    root = os.path.realpath(workspace)
    prune = DEFAULT_VENDORED if vendored is None else vendored
    pins = Pins()
    imports: dict[str, tuple[tuple[str, str], ...]] = {}
    try:
        deny = DenyRules(DEFAULT_DENY_READ if deny_read is None else deny_read)
        with SymlinkPolicy(root, prune, deny=deny) as rules:
            units, warnings = _load(rules, pins, max_file_bytes, imports, stop)
    except FileNotFoundError:
        return ProjectContext()
    except OSError as exc:
        units, warnings = [], [f"{DIRECTORY}/: cannot be read ({reason(exc)}); skipped"]
    finally:
        pins.release()
    shown = tuple(printable(warning) for warning in warnings)
    return ProjectContext(tuple(units), shown, imports)


def _refused_directory(rules: SymlinkPolicy) -> str | None:
    """Why ``.AGENTS`` is not read (a symlink, not a directory), or None."""
    info = os.stat(DIRECTORY, dir_fd=rules.root_fd(), follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return f"{DIRECTORY}/: is a symlink; not followed"
    if not stat.S_ISDIR(info.st_mode):
        return f"{DIRECTORY}: is not a directory; skipped"
    return None


def _load(
    rules: SymlinkPolicy,
    pins: Pins,
    cap: int,
    imports: dict[str, tuple[tuple[str, str], ...]],
    stop: threading.Event | None,
) -> tuple[list[Unit], list[str]]:
    problem = _refused_directory(rules)
    if problem is not None:
        return [], [problem]
    deny = rules.deny
    pattern = deny.denied(DIRECTORY, is_dir=True) if deny is not None else None
    if pattern is not None:
        return [], [deny_warning(f"{DIRECTORY}/", pattern)]
    fd = -1
    try:
        try:  # O_NOFOLLOW: swapped for a symlink since the check, it is refused
            fd = os.open(DIRECTORY, DIR_FLAGS, dir_fd=rules.root_fd())
            with os.scandir(fd) as entries:
                names = [
                    entry.name
                    for entry in entries
                    if entry.name.endswith(".md") and not entry.name.startswith(".")
                ]
        except OSError as exc:
            return [], [f"{DIRECTORY}/: cannot be listed ({reason(exc)}); skipped"]
        units: list[Unit] = []
        warnings: list[str] = []
        seen: dict[Identity, str] = {}
        for name in ordered_names(names):
            if stop is not None and stop.is_set():
                raise WalkCancelled
            relative = display_path(f"{DIRECTORY}/{name}")  # printable: it names the unit
            pattern = deny.entry(f"{DIRECTORY}/{name}", False) if deny is not None else None
            if pattern is not None:
                warnings.append(deny_warning(relative, pattern))
                continue
            read = _read(rules, fd, name, cap, warnings, relative)
            if read is None:
                continue
            data, real_rel = read
            identity = pins.identity(data, real_rel)
            if identity in seen:
                warnings.append(f"{relative}: same file as {seen[identity]}; loaded once")
                continue
            seen[identity] = relative
            text, altered = decode(data.data)
            text = text.rstrip().lstrip("\r\n")
            if not text.strip():
                warnings.append(f"{relative}: empty or whitespace only; skipped")
                continue
            warnings.extend(f"{relative}: {note}" for note in altered)
            door = ImportDoor(
                rules, cap=cap, stop=stop
            )  # @path lines: the same rules as every read
            text, imported, notes = expand_file(door, f"{DIRECTORY}/{name}", text)
            warnings.extend(f"{relative}: {note}" for note in notes)
            if imported:
                imports[relative] = imported
            digest = hashlib.sha256(data.data).hexdigest()
            units.append(
                Unit(
                    id=relative,
                    text=text,
                    source=relative,
                    version=revision(digest, imported) or digest,  # the file's revision
                    observed_at=datetime.now(UTC),
                )
            )
        return units, warnings
    finally:
        if fd >= 0:
            os.close(fd)


def _read(
    rules: SymlinkPolicy, fd: int, name: str, cap: int, warnings: list[str], relative: str
) -> tuple[FileRead, str] | None:
    """The file ``.AGENTS/name`` read (kept open for ``Pins``) with its real path, or None
    (warned)."""
    rel = f"{DIRECTORY}/{name}"
    target: str | int = name
    try:
        if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            followed = rules.open_target(rel)
            if isinstance(followed, SymlinkRefusal):
                warnings.append(f"{relative}: {refusal_message(followed)}; skipped")
                return None
            if followed.fd is None:
                warnings.append(f"{relative}: is not a regular file; skipped")
                return None
            target, rel = followed.fd, followed.real_rel
    except OSError as exc:
        warnings.append(f"{relative}: cannot be read ({reason(exc)}); skipped")
        return None
    read = read_file(target, cap=cap, dir_fd=fd, keep=True)
    if read.problem is not None:
        warnings.append(f"{relative}: {_problem(read, cap)}")
        return None
    return read, rel
