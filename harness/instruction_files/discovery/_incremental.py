"""Reload a workspace's instruction files after an edit, re-reading only what it can change.

    >>> import os, tempfile
    >>> from harness.instruction_files import InstructionFilesSettings
    >>> from harness.instruction_files.discovery._incremental import walk
    >>> from harness.workspace import resolve_workspace
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> for rel in ("a", "b"):
    ...     os.makedirs(os.path.join(root, rel))
    >>> settings = InstructionFilesSettings()
    >>> found, snapshot = walk(root, settings)              # a cold walk: 3 directories
    >>> with open(os.path.join(root, "b", "AGENTS.md"), "w") as out:
    ...     _ = out.write("rules\\n")
    >>> found, snapshot = walk(root, settings, base=(snapshot, frozenset({"b/AGENTS.md"})))
    >>> [source.path for source in found], snapshot.walked   # only b/ was listed again
    (['b/AGENTS.md'], 1)

``InstructionFiles`` keeps the ``Snapshot`` of its last walk of a workspace in its cache table
and ``invalidate(path)`` adds the path to its "dirt"; the next load then calls ``walk`` with
that base. What a path can change, and so what is listed and read again:

- a name a format reads (``AGENTS.md``, ``AGENTS.override.md``; created, changed, deleted,
  replaced by a directory): the directories its format says it affects (for ``agents``: its
  own directory: its listing, its files, its ``.gitignore``), and the path's subtree if it is
  a directory;
- a ``.gitignore``: its directory's subtree (and the parent, whose listing shows it);
- anything else (a directory created or deleted, a file we do not know): the parent's listing
  and the path's subtree, if it is a directory;
- the workspace itself, anything under ``.git`` or the root ``.gitignore``: everything (a cold
  walk).

Directories whose chosen instruction file is a symlink are listed again on every reload (what
they read depends on other places of the tree). A directory listed again keeps the
subdirectories the snapshot knew with the same listing (their subtrees are reused), walks the
new ones whole and forgets the vanished ones; what the snapshot learned inside a re-read
directory (its file, the files it shadowed, its warnings) is replaced. A directory to re-read
that the snapshot never listed is reached from its nearest listed ancestor, which is listed
again (so a new directory is found by its parent's listing, and a pruned one stays pruned: the
ancestors' ignore chains and the prunes are applied as on a cold walk). Each start is opened
from the workspace root one ``O_NOFOLLOW`` step at a time; if one cannot be opened (deleted,
replaced by a symlink) the reload falls back to a cold walk. The result is identical to a cold
walk's for the same tree, given an ``invalidate`` for every path that changed (property test:
``tests/instruction_files/test_incremental.py``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass

from harness.instruction_files._models import InstructionSet
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._format import Found, InstructionFormat
from harness.instruction_files.discovery._reader import Discovery
from harness.instruction_files.discovery.formats import formats_for
from harness.workspace import GITIGNORE, default_threads
from harness.workspace._ignore import IgnoreChain, WorkspaceRules

__all__ = ["Base", "Snapshot", "add_dirt", "located", "reusable", "scope", "walk"]

Listed = dict[str, Sequence[str]]
Chains = dict[str, IgnoreChain]
_SKIPPED_DIRECTORY = "directory skipped"  # the walk's warning for a directory it cannot read
DIRT_LIMIT = 1024  # paths invalidated between two loads past which the next walk is cold


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    """What a walk learned: per listed directory the subdirectories it walked (``listed``),
    per applied ``.gitignore`` the ignore chain of its subtree (``chains``, keyed by its
    directory), per ignored directory entered for its tracked files its chain (``entries``),
    the workspace's own rules (``base``: ``.git/info/exclude``, the tracked files), the files
    read, the warnings, the shadowed files.

    ``taken``: ``time.monotonic()`` when its oldest data was read; ``walked``: directories the
    walk that made it listed (a cold walk: all of them)."""

    settings: InstructionFilesSettings
    listed: Listed
    chains: Chains
    entries: Chains
    base: IgnoreChain | None
    found: tuple[Found, ...]
    warnings: tuple[tuple[str, str], ...]
    shadowing: dict[str, list[str]]
    linked: frozenset[str]
    taken: float
    walked: int


Base = tuple[Snapshot, frozenset[str]]
"""A snapshot and its dirt: the workspace-relative paths invalidated since it was taken."""


def scope(root: str, path: str) -> str | None:
    """What an invalidated ``path`` (absolute, resolved) is to the workspace ``root``: its
    workspace-relative POSIX path, ``""`` for the workspace itself or a directory holding
    it (everything), ``None`` when unrelated."""
    prefix = root.rstrip("/") + "/"
    if path == root or prefix.startswith(path.rstrip("/") + "/"):
        return ""
    if path.startswith(prefix):
        return path[len(prefix) :].strip("/")
    return None


def located(path: str) -> str:
    """Where ``path`` itself is, resolved: its directory's real path and its own name (for a
    symlink, its own place, which is what changed; ``realpath`` would give its target's)."""
    head, tail = os.path.split(os.path.abspath(path))
    return os.path.join(os.path.realpath(head), tail) if tail else os.path.realpath(path)


def add_dirt(snapshots: MutableMapping[str, Base], places: set[str]) -> None:
    """Add the invalidated ``places`` (resolved paths) to the dirt of the snapshots they
    concern; forget a snapshot whose workspace they contain, or whose dirt grows past
    ``DIRT_LIMIT`` (its next walk is cold: memory stays bounded)."""
    for root in list(snapshots.keys()):
        base = snapshots.get(root)
        rels = {scope(root, place) for place in places} - {None}
        if base is None or not rels:
            continue
        dirt = base[1].union(rel for rel in rels if rel)
        if "" in rels or len(dirt) > DIRT_LIMIT:
            snapshots.pop(root, None)
        else:
            snapshots[root] = (base[0], dirt)


def reusable(base: Base | None, settings: InstructionFilesSettings) -> Base | None:
    """``base``, unless its oldest data is older than the cache's TTL (then: a cold walk)."""
    ttl = settings.cache_ttl
    if base is not None and ttl is not None and time.monotonic() - base[0].taken > ttl:
        return None
    return base


def walk(
    root: str,
    settings: InstructionFilesSettings,
    stop: threading.Event | None = None,
    base: Base | None = None,
) -> tuple[InstructionSet, Snapshot]:
    """The instruction files of ``root`` (resolved) and the snapshot of this walk: from
    ``base`` re-reading only what its dirt can change, else a cold walk. Blocking."""
    if base is not None and base[0].settings == settings:
        plan = _plan(*base)
        if plan is not None:
            reloaded = _reload(root, settings, stop, base[0], *plan)
            if reloaded is not None:
                return reloaded
    return _cold(root, settings, stop)


def _threads(settings: InstructionFilesSettings) -> int:
    return settings.walk_threads or default_threads()


def _cold(
    root: str, settings: InstructionFilesSettings, stop: threading.Event | None
) -> tuple[InstructionSet, Snapshot]:
    taken = time.monotonic()
    cold = Discovery(root, settings, stop, record=True)
    walk = cold.walk
    try:
        walk.run(_threads(settings))
        found = cold.assemble(cold.found, walk.warnings)
    finally:
        cold.release()
    listed = walk.listed
    assert listed is not None
    snapshot = Snapshot(
        settings,
        listed,
        walk.chains,
        walk.entries,
        walk.base,
        tuple(cold.found),
        tuple(walk.warnings),
        cold.shadowing,
        frozenset(cold.linked),
        taken,
        len(listed),
    )
    return found, snapshot


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


def _under(rel: str, roots: set[str], *, strict: bool = False) -> bool:
    """Whether ``rel`` is one of ``roots`` (unless ``strict``) or lies below one."""
    if not strict and rel in roots:
        return True
    while rel:
        rel = _parent(rel)
        if rel in roots:
            return True
    return False


def _plan(snapshot: Snapshot, dirt: frozenset[str]) -> tuple[set[str], set[str]] | None:
    """(directories to list again, subtrees to walk whole), or None for a cold walk."""
    formats = formats_for(snapshot.settings)
    owners = {name: fmt for fmt in reversed(formats) for name in fmt.candidates()}
    gitignores = GITIGNORE not in owners
    own: set[str] = set(snapshot.linked)
    whole: set[str] = set()
    for rel in dirt:
        if not rel or rel.split("/", 1)[0] == ".git":
            return None
        parent, _, name = rel.rpartition("/")
        if gitignores and name == GITIGNORE:
            if not parent:
                return None  # the root .gitignore governs everything
            whole.add(parent)
            own.add(_parent(parent))
            continue
        home = _home(formats, rel)
        if home is not None:  # inside a rules directory: its directory's visit reads it
            own.add(home)
            whole.add(rel)
            continue
        owner = owners.get(name)
        own.update(owner.affects(rel) if owner is not None else (parent,))
        whole.add(rel)  # a directory of that name (or one that replaced it): walked afresh
    whole = {rel for rel in whole if not _under(rel, whole, strict=True)}
    own = {rel for rel in own if not _under(rel, whole)}
    listed = snapshot.listed
    for rel in list(own):
        while rel not in listed:  # never listed (new, pruned, unreadable): from its ancestor
            if not rel:
                return None
            rel = _parent(rel)
            own.add(rel)
    return own, whole


class _Guide:
    """A reload's guide: the directories to list again (``directories``) walk the
    subdirectories on them, new ones, and those of ``whole``; the others' subtrees come from
    the snapshot (``old``)."""

    def __init__(self, old: Listed, own: set[str], whole: set[str]) -> None:
        self.directories = frozenset(own)
        self.old = old
        self.whole = whole
        self.replaced: list[str] = []  # subtrees walked afresh, or gone

    def choose(self, rel: str, subdirs: list[str]) -> list[str]:
        prefix = rel + "/" if rel else ""
        guide, old, whole, replaced = self.directories, self.old, self.whole, self.replaced
        walked = []
        for name in subdirs:
            child = prefix + name
            if child in guide:
                walked.append(name)
            elif child in whole or child not in old:
                walked.append(name)
                replaced.append(child)
        before = old.get(rel)
        if before:
            now = set(subdirs)
            replaced.extend(prefix + name for name in before if name not in now)
        return walked


def _subtrees(listed: Listed, roots: Iterable[str]) -> Iterator[str]:
    """Every directory the snapshot knew in the subtrees of ``roots`` (roots included)."""
    stack = list(roots)
    while stack:
        rel = stack.pop()
        yield rel
        prefix = rel + "/" if rel else ""
        stack.extend(prefix + name for name in listed.get(rel, ()))


def _chain_above(snapshot: Snapshot, rel: str) -> IgnoreChain | None:
    """The ignore chain a walk passes down to ``rel``: its own if it was entered for its
    tracked files, else the nearest ancestor's (a ``.gitignore``'s or an entered one's)."""
    chains, entries = snapshot.chains, snapshot.entries
    chain = entries.get(rel)
    while chain is None and rel:
        rel = _parent(rel)
        chain = chains.get(rel)
        if chain is None:
            chain = entries.get(rel)
    return snapshot.base if chain is None else chain


def _home(formats: Sequence[InstructionFormat], rel: str) -> str | None:
    """The directory scoping ``rel`` when it lies in a rules directory of one of
    ``formats``."""
    for fmt in formats:
        home = fmt.home(rel)
        if home is not None:
            return home
    return None


def _owner(formats: Sequence[InstructionFormat], rel: str, reason: str) -> str:
    """The directory whose walk made a warning (a directory for its own skip, the directory
    scoping a rules directory's file, else the directory of the file)."""
    if reason.startswith(_SKIPPED_DIRECTORY):
        return "" if rel == "." else rel
    home = _home(formats, rel)
    return home if home is not None else _parent(rel)


def _reload(
    root: str,
    settings: InstructionFilesSettings,
    stop: threading.Event | None,
    snapshot: Snapshot,
    own: set[str],
    whole: set[str],
) -> tuple[InstructionSet, Snapshot] | None:
    """The incremental walk and the merge; None when a start cannot be opened."""
    old = snapshot.listed
    starts = sorted(rel for rel in own if not rel or _parent(rel) not in own)
    guide = _Guide(old, own, whole)
    rules = WorkspaceRules(snapshot.base)  # the snapshot's: a change under .git is a cold walk
    reload = Discovery(root, settings, stop, rules=rules, record=True, guide=guide)
    try:
        starting = [(rel, _chain_above(snapshot, rel)) for rel in starts]
        reload.walk.run(_threads(settings), starting)
        merged = _merge(settings, snapshot, reload, guide, starts, own)
        if merged is None:
            return None
        # Imports are expanded through the reload's symlink policy: before it is released.
        reload.shadowing = merged.shadowing
        return reload.assemble(merged.found, merged.warnings), merged
    finally:
        reload.release()


def _merge(
    settings: InstructionFilesSettings,
    snapshot: Snapshot,
    reload: Discovery,
    guide: _Guide,
    starts: list[str],
    own: set[str],
) -> Snapshot | None:
    """The snapshot after a reload: the old one with what the reload re-read replaced; None
    when a start could not be opened (gone or swapped: what is there is unknown)."""
    old = snapshot.listed
    walk = reload.walk
    relisted = walk.listed
    assert relisted is not None
    begun = set(starts)
    for rel, reason in walk.warnings:
        if reason.startswith(_SKIPPED_DIRECTORY) and (rel if rel != "." else "") in begun:
            return None  # gone or swapped since the snapshot: what is there is unknown
    dropped = own.union(_subtrees(old, guide.replaced))
    listed = dict(old)
    for rel in dropped:
        listed.pop(rel, None)
    listed.update(relisted)
    chains = {rel: chain for rel, chain in snapshot.chains.items() if rel not in dropped}
    chains.update(walk.chains)
    # (an entered directory's chain is its parent's decision: it goes when the parent does)
    entries = {rel: chain for rel, chain in snapshot.entries.items() if _parent(rel) not in dropped}
    entries.update(walk.entries)
    found = [item for item in snapshot.found if item.directory not in dropped]
    found += reload.found
    formats = reload.formats
    warnings = [item for item in snapshot.warnings if _owner(formats, *item) not in dropped]
    warnings += walk.warnings
    shadowing = {
        rel: shadowed
        for rel, shadowed in snapshot.shadowing.items()
        if _owner(formats, rel, "") not in dropped
    }
    shadowing.update(reload.shadowing)
    linked = {rel for rel in snapshot.linked if rel not in dropped} | reload.linked
    merged = Snapshot(
        settings,
        listed,
        chains,
        entries,
        snapshot.base,
        tuple(found),
        tuple(warnings),
        shadowing,
        frozenset(linked),
        snapshot.taken,
        len(relisted),
    )
    return merged
