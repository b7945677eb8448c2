"""The format seam: what one agent's rule files (or ``.AGENTS/``) are, as a read meets them.

A format is one object with a few answers; the walk, the reads, the ignore rules and the
incremental reloads are shared by every format::

    from harness.instruction_files.discovery._format import Directory, Found

    class Gemini:                                   # GEMINI.md in any directory
        name, layer = "gemini", INSTRUCTIONS

        def candidates(self) -> frozenset[str]:
            return frozenset({"GEMINI.md"})

        def visit(self, directory: Directory) -> None:
            directory.take("GEMINI.md")

        def sources(self, found: Found, door):     # the file's text as one source
            return file_sources(found, door, "gemini")

        def affects(self, rel: str) -> frozenset[str]:
            return frozenset({rel.rpartition("/")[0]})

- ``candidates``: the entry names of a directory the format reads. The walk hands a
  directory's entries of those names to ``visit``, and to no one else.
- ``visit``: which of them to read, through ``Directory`` (``take`` checks the ignore
  rules, the entry's type and the symlink policy, warning about a candidate passed over,
  then reads it through the capped reader; a rejection after that is a warning too). What
  the visit reads is this directory's: a reload that lists the directory again drops and
  re-reads it.
- ``sources``: how a file read becomes instruction sources (and warnings): decoded, its
  ``@path`` imports expanded, usually one source per file (``file_sources``).
- ``affects``: which directories to list again when ``rel`` (a path this format reads) is
  created, changed or deleted; the path's own subtree is always walked again too.

- ``home``: for a path inside one of the format's rules directories, the directory that
  scopes it (its globs are relative to it), else None.
- ``rank``: where a file comes among the format's files of one directory.
- ``layer``: the prompt layer its sources feed. The walk of every directory reads the
  configured formats of the instruction layer (``INSTRUCTIONS``); a format of another layer
  is read by every build at the workspace root alone (``root.read_root``): ``.AGENTS/``,
  the ``project_context`` format, is one.

A new format is one module implementing this, plus its entry in ``formats.FORMATS``. Most
formats are declarations on ``rules.RuleFormat`` (whole ``files``, a ``rules`` directory, a
``decide`` reading a rule's frontmatter, ``layer``), which answers all of it::

    class Windsurf(RuleFormat):
        name, files, rules = "windsurf", (".windsurfrules",), (".windsurf", "rules")
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.instruction_files._models import (
    InstructionSource,
    PassedRule,
    SourceKind,
    Trigger,
)
from harness.instruction_files.discovery._made import made_source as _source
from harness.workspace import (
    DirectoryWalk,
    FileRead,
    Here,
    Identity,
    Pins,
    SymlinkPolicy,
    SymlinkRefusal,
    decode,
    display_path,
    kind_of,
    name_length,
    read_file,
    reason,
    refusal_message,
    too_long,
)
from harness.workspace._gitignore import GITIGNORE
from harness.workspace._ignore import IgnoreChain
from harness.workspace._import_door import ImportDoor, expand_file, revision
from harness.workspace._paths import PATH_MAX
from harness.workspace._reading import DIR_FLAGS
from harness.workspace.deny import deny_warning

__all__ = [
    "INSTRUCTIONS",
    "Directory",
    "Found",
    "InstructionFormat",
    "body_source",
    "deny_reason",
    "file_sources",
    "layer_of",
]

INSTRUCTIONS = "instruction_files"
"""The prompt layer of instruction files: the layer of every format that does not name one."""


@dataclass(slots=True)
class Found:
    """One file a format read: where (``rel``, ``depth`` of its directory), which format
    (``format``: its index in the walk's formats) and its place among that format's files of
    the directory (``rank``), the file's identity and bytes."""

    depth: int
    rel: str
    identity: Identity
    data: bytes
    format: int = 0
    rank: int = 0
    home: str | None = None  # the directory scoping it, when not its own (a rules directory)
    local: bool = False  # a local file read although an ignore rule lists it

    @property
    def directory(self) -> str:
        """The directory that scopes the file: the one whose visit read it."""
        return self.home if self.home is not None else self.rel.rpartition("/")[0]

    def order(self) -> tuple[int, str, int, int, str]:
        """Ascending precedence: shallow to deep, by directory, format, rank, path."""
        home = self.home  # ``directory`` inline: a cold load sorts every file by this
        directory = home if home is not None else self.rel.rpartition("/")[0]
        return (self.depth, directory + "/", self.format, self.rank, self.rel)


class InstructionFormat(Protocol):
    """One agent's instruction files (see the module docstring)."""

    name: str
    layer: str  # the prompt layer its sources feed (``INSTRUCTIONS`` for rule files)

    def candidates(self) -> frozenset[str]:
        """Entry names of a directory this format reads."""
        ...

    def visit(self, directory: Directory) -> None:
        """Read this directory's files of the format (``directory.read``)."""
        ...

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        """The sources a file read becomes (a ``PassedRule`` for a rule file that is not
        one), and the notes (warnings) about it."""
        ...

    def affects(self, rel: str) -> frozenset[str]:
        """Directories to list again when ``rel`` changes."""
        ...

    def home(self, rel: str) -> str | None:
        """For a path inside one of this format's rules directories (the directory, or
        anything below it), the directory that scopes it; else None."""
        ...

    def rank(self, rel: str) -> int:
        """Where the file ``rel`` comes among this format's files of one directory (the
        ``rank`` its visit gives it): a layer read at the root orders its warnings by it."""
        ...


def deny_reason(pattern: str) -> str:
    """Why a path matching the ``deny_read`` pattern ``pattern`` is not read."""
    return deny_warning("", pattern).removeprefix(": ")


def layer_of(fmt: object) -> str:
    """The prompt layer ``fmt`` feeds: its ``layer``, the instruction layer when it has none."""
    layer = getattr(fmt, "layer", INSTRUCTIONS)
    return layer if isinstance(layer, str) else INSTRUCTIONS


def file_sources(
    found: Found, door: ImportDoor, format: str
) -> tuple[list[InstructionSource], list[str]]:
    """A file as one source of ``format`` (the root's kind at depth 0), applied always:
    decoded, imports expanded; no source for a blank file. ``door`` must belong to a walk
    not released yet."""
    content, notes = decode(found.data)
    if "@" in content or not content.strip():
        made, more = body_source(found, door, format, content)
        return made, [*notes, *more] if made else more  # a blank file: only that it was skipped
    # ``body_source``'s common case inline (one per file of a cold load): no imports
    digest = hashlib.sha256(found.data).hexdigest()
    kind: SourceKind = "root" if found.depth == 0 else "directory"
    path = display_path(found.rel)
    return [
        _source(kind, path, content, digest, found.depth, None, (), format, "always", (), {})
    ], notes


def body_source(
    found: Found,
    door: ImportDoor,
    format: str,
    body: str,
    *,
    trigger: Trigger = "always",
    globs: tuple[str, ...] = (),
    metadata: Mapping[str, object] | None = None,
) -> tuple[list[InstructionSource], list[str]]:
    """``body`` (the decoded text of ``found``, less any frontmatter) as one source, its
    imports expanded; none for a blank body. The digest is of the file's bytes."""
    if not body.strip():
        return [], ["skipped: empty or whitespace-only"]
    content, imports, notes = expand_file(door, found.rel, body)
    digest = hashlib.sha256(found.data).hexdigest()
    source = _source(
        "root" if found.depth == 0 else "directory",
        display_path(found.rel),
        content,
        digest,
        found.depth,
        revision(digest, imports),
        imports,
        format,
        trigger,
        globs,
        metadata if metadata is not None else {},
    )
    return [source], notes


class Reading(Protocol):
    """What one walk's reads share (``reader.Discovery`` is it): the files found, the local
    files read although ignored, the shadowing and symlinked-candidate records, the pins,
    the symlink policy, the cap."""

    found: list[Found]
    local_reads: set[str]
    shadowing: dict[str, list[str]]
    linked: set[str]
    pins: Pins
    symlinks: SymlinkPolicy
    max_bytes: int


class Directory:
    """One directory as a format's ``visit`` sees it: its candidate entries (``named``) and
    the safe ways to look at them and read them."""

    __slots__ = ("_discovery", "_format", "_walk", "here", "home", "named", "prefix")

    def __init__(
        self,
        discovery: Reading,
        walk: DirectoryWalk,
        here: Here,
        named: dict[str, os.DirEntry[str]],
        format_index: int,
        home: str | None = None,
    ) -> None:
        self._discovery = discovery
        self._walk = walk
        self._format = format_index
        self.here = here
        self.named = named
        self.prefix = here.rel + "/" if here.rel else ""
        self.home = here.rel if home is None else home  # the directory scoping what it reads

    def subdirectory(self, name: str) -> Directory | None:
        """Entry ``name`` as a ``Directory`` of all its entries, scoped like this one (for a
        rules directory such as ``.cursor/rules``), or None when it is not a directory the
        walk would enter (a symlink, vendored, ignored: warned unless silent as a prune) or
        cannot be read (warned). Close it with ``close``."""
        entry = self.named.get(name)
        walk = self._walk
        if entry is None or not entry.is_dir(follow_symlinks=False) or name in walk.prune:
            if entry is not None and entry.is_symlink():
                self.warn(name, "skipped: a symlinked rules directory is not entered")
            return None
        if self.home != self.here.rel and self.denied(name, is_dir=True):
            return None
        chain = self.here.chain
        rel = self.prefix + name
        if chain is not None and chain.ignored(rel, name, True):
            return None  # ignored directories are pruned silently, as the walk does
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=self.here.fd)
        except OSError as exc:
            self.warn(name, f"rules directory skipped: it cannot be read ({reason(exc)})")
            return None
        try:
            with os.scandir(fd) as entries:
                named = {entry.name: entry for entry in entries}
            chain = _with_gitignore(walk, fd, rel, chain, named)
        except OSError as exc:
            os.close(fd)
            self.warn(name, f"rules directory skipped: it cannot be read ({reason(exc)})")
            return None
        here = Here(fd, rel, self.here.depth, self._length(name), chain)
        return Directory(self._discovery, walk, here, named, self._format, self.home)

    def denied(self, name: str, *, is_dir: bool = False) -> bool:
        """Whether ``deny_read`` denies entry ``name`` (warned): it is never opened. The walk
        has checked its own entries; this is for those below them (a rules directory's)."""
        deny = self._walk.deny
        pattern = deny.entry(self.prefix + name, is_dir) if deny is not None else None
        if pattern is None:
            return False
        self.warn(name, deny_reason(pattern))
        return True

    def close(self) -> None:
        """Close a ``subdirectory``'s descriptor."""
        os.close(self.here.fd)

    def warn(self, name: str, reason: str) -> None:
        self._walk.warn(self.prefix + name, reason)

    def is_file(self, name: str) -> bool:
        """Whether entry ``name`` is present and not a directory (a candidate it shadows)."""
        entry = self.named.get(name)
        return entry is not None and not entry.is_dir(follow_symlinks=False)

    def ignored(self, name: str, *, local: bool = False) -> bool:
        """Whether git ignores entry ``name`` (warned with the deciding ignore file and
        line, unless its whole directory is). A ``local`` file (meant to stay out of git)
        is read even when an ignore rule lists it, but never inside an ignored directory
        (unless tracked there); ``local_reads`` records it."""
        chain = self.here.chain
        rel = self.prefix + name
        if chain is None or not chain.ignored(rel, name, False):
            return False
        return self._ignored(chain, rel, name, local)

    def _ignored(self, chain: IgnoreChain, rel: str, name: str, local: bool) -> bool:
        """``ignored`` for an entry its chain ignores."""
        if chain.only_tracked:  # inside an ignored directory: silent, as a prune
            return True
        if local:
            self._discovery.local_reads.add(rel)
            return False
        deciding = chain.deciding(rel, name, False)
        where = ".gitignore" if deciding is None else f"{deciding[0]}:{deciding[1]}"
        self.warn(name, f"skipped: ignored by {where}")
        return True

    def take(
        self, name: str, *, rank: int = 0, shadows: tuple[str, ...] = (), local: bool = False
    ) -> bool:
        """Read entry ``name`` if it is present, not ignored and may be read (True: it was
        chosen, even if the read then rejects it); else False, warned. ``shadows``: the
        entries a chosen file keeps from being read; ``local``: see ``ignored``."""
        entry = self.named.get(name)
        if entry is None:
            return False
        # ``ignored`` and ``eligible``'s common case inline: a regular file no rule ignores
        here, rel = self.here, self.prefix + name
        chain = here.chain
        if (
            chain is not None
            and chain.ignored(rel, name, False)
            and self._ignored(chain, rel, name, local)
        ):
            return False
        if self.home != here.rel and self.denied(name):
            return False
        if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            eligible = self.eligible(name)
            if eligible is None:
                return False
            self.read(name, eligible, rank=rank, shadows=shadows)
        else:
            self.read(name, (name, rel), rank=rank, shadows=shadows)
        return True

    def eligible(self, name: str) -> tuple[str | int, str] | None:
        """(name to open, or the descriptor of a followed symlink's target; its real
        workspace-relative path) if ``name`` is a regular file inside the workspace that may
        be read, else warn. A followed symlink's descriptor is closed by ``read``."""
        entry = self.named[name]
        rel = self.prefix + name
        discovery = self._discovery
        try:
            if not entry.is_symlink():
                if entry.is_file(follow_symlinks=False):
                    return entry.name, rel
                mode = entry.stat(follow_symlinks=False).st_mode
                self.warn(name, f"skipped: {kind_of(mode)}, not a regular file")
                return None
            discovery.linked.add(self.home)  # depends on what it points to
            problem = too_long(self._length(name))
            if problem is not None:
                raise problem
            target = discovery.symlinks.open_target(rel)
        except OSError as exc:
            self.warn(name, f"skipped: it cannot be examined ({reason(exc)})")
            return None
        if isinstance(target, SymlinkRefusal):
            self.warn(name, f"skipped: {refusal_message(target)}")
            return None
        if target.fd is None:
            self.warn(name, f"skipped: a symlink to {kind_of(target.mode)}, not a regular file")
            return None
        return target.fd, target.real_rel

    def _length(self, name: str) -> int:
        return self.here.length + 1 + name_length(name)

    @property
    def policy(self) -> SymlinkPolicy:
        """The walk's symlink policy (its ``deny`` rules too), for a format reading itself."""
        return self._discovery.symlinks

    @property
    def cap(self) -> int:
        """The byte cap of one file."""
        return self._discovery.max_bytes

    def stopping(self) -> bool:
        """Whether the walk was asked to stop (a format reading itself raises
        ``WalkCancelled`` then)."""
        stop = self._walk.stop
        return stop is not None and stop.is_set()

    def keep(self, rel: str, read: FileRead, real_rel: str, *, rank: int = 0) -> None:
        """Record ``read`` (kept open by ``read_file(..., keep=True)``), the file at ``rel``
        whose real path is ``real_rel``, as one this directory's visit found."""
        discovery = self._discovery
        identity = discovery.pins.identity(read, real_rel)
        home = None if self.home == self.here.rel else self.home
        local = rel in discovery.local_reads
        here = self.here
        discovery.found.append(
            Found(here.depth, rel, identity, read.data, self._format, rank, home, local)
        )

    def read(
        self,
        name: str,
        eligible: tuple[str | int, str],
        *,
        rank: int = 0,
        shadows: tuple[str, ...] = (),
    ) -> None:
        """Read entry ``name`` (``eligible``'s answer for it) whole, at most ``max_bytes``;
        a rejection is a warning. ``shadows``: the entries it keeps from being read."""
        discovery = self._discovery
        rel = self.prefix + name
        if shadows:
            discovery.shadowing[rel] = [self.prefix + other for other in shadows]
        target, real_rel = eligible
        here = self.here
        # a name of n characters is at most 4n bytes: only a long one is counted
        if isinstance(target, str) and here.length + 1 + 4 * len(name) >= PATH_MAX:
            problem = too_long(self._length(name))
            if problem is not None:
                self.warn(name, f"skipped: it cannot be opened ({reason(problem)})")
                return
        cap = discovery.max_bytes
        read = read_file(target, cap=cap, dir_fd=here.fd, keep=True)
        if read.problem is None:
            self.keep(rel, read, real_rel, rank=rank)
        elif read.problem == "special":
            assert read.info is not None
            self.warn(name, f"skipped: {kind_of(read.info.st_mode)} (it changed during the walk)")
        elif read.problem in ("size", "grew"):
            self.warn(
                name,
                f"skipped: {read.size} bytes, over the max_bytes cap of {cap} "
                "(raise instruction_files.max_bytes to load it)",
            )
        else:
            assert read.error is not None
            verb = "opened" if read.problem == "open" else "read"
            self.warn(name, f"skipped: it cannot be {verb} ({reason(read.error)})")


def _with_gitignore(
    walk: DirectoryWalk,
    fd: int,
    rel: str,
    chain: IgnoreChain | None,
    named: dict[str, os.DirEntry[str]],
) -> IgnoreChain | None:
    """The chain of a rules directory's entries: with its own ``.gitignore`` applied, as the
    walk applies one (one that cannot be applied ignores everything: fail closed)."""
    entry = named.pop(GITIGNORE, None)
    if entry is None or not walk.gitignores:
        return chain
    applied = walk.apply_gitignore(fd, entry, rel, chain)
    if applied is False:
        named.clear()
        return chain
    return applied
