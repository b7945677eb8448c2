"""A layer read at the workspace root: the formats of a layer other than the instruction files.

    >>> import os, tempfile
    >>> from harness.instruction_files.discovery import read_root
    >>> from harness.instruction_files.discovery.formats import layer_formats
    >>> ws = os.path.realpath(tempfile.mkdtemp())
    >>> os.mkdir(os.path.join(ws, ".AGENTS"))
    >>> with open(os.path.join(ws, ".AGENTS", "overview.md"), "w") as out:
    ...     _ = out.write("the map\\n")
    >>> sources, warnings = read_root(ws, layer_formats("project_context"), cap=65536)
    >>> [(source.path, source.content) for source in sources], warnings
    ([('.AGENTS/overview.md', 'the map')], [])

The instruction walk visits every directory of a tree; a layer such as ``project_context``
belongs to the workspace, so its formats visit the root alone, through the same seam: each
format's ``visit`` sees the root's entries it names (less what ``deny_read`` denies) and reads
through ``Directory``, and its ``sources`` turns each file read into sources. No ignore rule
applies to the root's own entries (a layer's files are the workspace's own, read even when
untracked); a symlink is followed only when the ``SymlinkPolicy`` allows its real path (not
gitignored among the rest). One file reachable by two names is read once. Warnings come per
format in the order of its files (``rank``), each file's in the order they arose.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence

from harness.instruction_files._models import InstructionSource
from harness.instruction_files.discovery._format import (
    Directory,
    Found,
    InstructionFormat,
    deny_reason,
)
from harness.workspace import (
    DirectoryWalk,
    Here,
    Identity,
    Pins,
    SymlinkPolicy,
    display_path,
    name_length,
    printable,
)
from harness.workspace._import_door import ImportDoor
from harness.workspace.deny import DenyRules

__all__ = ["read_root"]

Warning = tuple[str, str]  # (workspace-relative path, reason)


class _Reading:
    """What the root's ``Directory`` reads into (``_format.Reading``)."""

    def __init__(self, symlinks: SymlinkPolicy, pins: Pins, cap: int) -> None:
        self.found: list[Found] = []
        self.local_reads: set[str] = set()
        self.shadowing: dict[str, list[str]] = {}
        self.linked: set[str] = set()
        self.pins = pins
        self.symlinks = symlinks
        self.max_bytes = cap

    def files(self, walk: DirectoryWalk, here: Here, named: dict[str, os.DirEntry[str]]) -> None:
        """Unused: the root is visited directly, never walked."""


def read_root(
    root: str,
    formats: Sequence[InstructionFormat],
    *,
    cap: int,
    vendored: Iterable[str] = (),
    deny: DenyRules | None = None,
    stop: threading.Event | None = None,
) -> tuple[list[InstructionSource], list[str]]:
    """The sources ``formats`` read at ``root`` (resolved already), and the warnings, each
    one printable line. Blocking; ``WalkCancelled`` soon after ``stop`` is set. Raises
    ``FileNotFoundError`` for a missing root, ``OSError`` for one that cannot be opened."""
    pins = Pins()
    try:
        with SymlinkPolicy(root, vendored, deny=deny) as policy:
            reading = _Reading(policy, pins, cap)
            # the root's own entries: no ignore rule applies (and no git index is read)
            walk = DirectoryWalk(
                root, reading, prune=vendored, special=(), stop=stop, gitignores=False, deny=deny
            )
            listed = _visit(policy, reading, walk, formats)
            sources, notes = _sources(policy, reading.found, formats, cap, stop)
            warnings = [*listed, *_ordered(walk.warnings + notes, reading.found, formats)]
    finally:
        pins.release()
    return sources, [printable(f"{display_path(rel)}: {why}") for rel, why in warnings]


def _visit(
    policy: SymlinkPolicy,
    reading: _Reading,
    walk: DirectoryWalk,
    formats: Sequence[InstructionFormat],
) -> list[Warning]:
    """Each format's visit of the root, with its own candidates; the denied ones warned."""
    fd = policy.root_fd()
    wanted = frozenset().union(*(fmt.candidates() for fmt in formats))
    with os.scandir(fd) as entries:
        named = {entry.name: entry for entry in entries if entry.name in wanted}
    denied: list[Warning] = []
    deny = policy.deny
    for name, entry in sorted(named.items()):
        is_dir = entry.is_dir(follow_symlinks=False)
        pattern = deny.entry(name, is_dir) if deny is not None else None
        if pattern is not None:
            shown = f"{name}/" if is_dir else name
            denied.append((shown, deny_reason(pattern)))
            del named[name]
    here = Here(fd, "", 0, name_length(policy.root), None)
    for index, fmt in enumerate(formats):
        mine = {name: entry for name, entry in named.items() if name in fmt.candidates()}
        if mine:
            fmt.visit(Directory(reading, walk, here, mine, index))
    return denied


def _sources(
    policy: SymlinkPolicy,
    found_files: list[Found],
    formats: Sequence[InstructionFormat],
    cap: int,
    stop: threading.Event | None,
) -> tuple[list[InstructionSource], list[Warning]]:
    """The files read, in order, as sources; a second name of one file is skipped."""
    found_files.sort(key=lambda found: (found.format, found.rank, found.rel))
    sources: list[InstructionSource] = []
    notes: list[Warning] = []
    seen: dict[Identity, str] = {}
    for found in found_files:
        shown = display_path(found.rel)
        first = seen.get(found.identity)
        if first is not None:
            notes.append((found.rel, f"same file as {first}; loaded once"))
            continue
        seen[found.identity] = shown
        door = ImportDoor(policy, cap=cap, stop=stop)  # @path lines: the rules of every read
        made, more = formats[found.format].sources(found, door)
        sources.extend(item for item in made if isinstance(item, InstructionSource))
        notes.extend((found.rel, note) for note in more)
    return sources, notes


def _ordered(
    warnings: list[Warning], found_files: list[Found], formats: Sequence[InstructionFormat]
) -> list[Warning]:
    """``warnings`` per format, in the order of its files (stable: a file's keep theirs)."""
    owner = {found.rel: found.format for found in found_files}

    def key(warning: Warning) -> tuple[int, int, str]:
        rel = warning[0]
        index = owner.get(rel, _owner_of(rel, formats))
        return (index, formats[index].rank(rel), rel)

    return sorted(warnings, key=key)


def _owner_of(rel: str, formats: Sequence[InstructionFormat]) -> int:
    """The format whose candidate ``rel`` lies under (the first, when none claims it)."""
    top = rel.partition("/")[0]
    return next((i for i, fmt in enumerate(formats) if top in fmt.candidates()), 0)
