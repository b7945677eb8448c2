"""``SkillCache``: skills discovery kept between calls, refreshed by ``invalidate(path)``.

::

    from harness.skills import SkillCache, SkillCatalog

    cache = SkillCache()
    catalog = await SkillCatalog.discover("/srv/acme", cache=cache)   # a cold scan
    cache.invalidate("/srv/acme/.claude/skills/pdf/SKILL.md")          # plain call, no await
    catalog = await SkillCatalog.discover("/srv/acme", cache=cache)   # re-reads pdf/ only

``Harness`` holds one (``h.skills`` uses it; ``h.invalidate(path)`` reaches it). What a path
can change, and so what is listed and read again: a path inside a skill (its ``SKILL.md``,
a resource, a subdirectory) lists the skills directory again and re-scans that one skill's
directory, reusing every other skill as scanned; a skills directory, a directory above it,
a ``.gitignore`` on its way, the skills directory's own ``SKILL.md`` or ``.gitignore``, and
a skills directory that was absent or cut by a bound re-scan that skills directory whole;
the workspace itself or anything under ``.git`` re-scans everything. Any other path changes
nothing but the memo of finished catalogs, which every ``invalidate`` clears. The result is
a cold discovery's for the same tree, given an ``invalidate`` for every path that changed.
Frontmatter is parsed again only for ``SKILL.md`` bytes not seen before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.skills._scan import DirScan

__all__ = ["Key", "RootState", "SkillCache", "affected"]

_EVERYTHING = ""  # dirt meaning: re-scan every skills directory of the root


Key = tuple[str, int]  # a skills directory (root-relative) and its place in the settings


@dataclass(slots=True)
class RootState:
    """What the cache keeps of one scanned root (a workspace or a user skills directory):
    per skills directory its last scan and the paths invalidated since, and parsed
    frontmatter by ``SKILL.md`` path and bytes. ``scan_lock`` serialises the root's scans."""

    scans: dict[Key, DirScan] = field(default_factory=dict)
    dirt: dict[Key, set[str]] = field(default_factory=dict)
    parsed: dict[tuple[str, bytes], Any] = field(default_factory=dict)
    scan_lock: threading.Lock = field(default_factory=threading.Lock)


def _located(path: str) -> str:
    """``path`` absolute with its directories resolved (the last name kept: a deleted file
    or a symlink is named as the watcher saw it)."""
    absolute = os.path.abspath(path)
    head, name = os.path.split(absolute)
    return os.path.join(os.path.realpath(head), name) if name else os.path.realpath(absolute)


def _within(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` ("/"-separated; "" for the root itself), or None."""
    if path == root:
        return ""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")


class SkillCache:
    """Skills discovery's state between calls (see the module docstring). Safe from any
    thread; ``invalidate`` is a plain synchronous call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roots: dict[tuple[str, Hashable], RootState] = {}
        self._catalogs: dict[Hashable, object] = {}
        self.generation = 0

    def state(self, root: str, settings: Hashable) -> RootState:
        """The state of ``root`` scanned under ``settings`` (created empty on first use)."""
        with self._lock:
            return self._roots.setdefault((root, settings), RootState())

    def take(self, state: RootState, key: Key) -> tuple[DirScan | None, frozenset[str]]:
        """The last scan of ``key`` and the paths invalidated since (now forgotten)."""
        with self._lock:
            dirt = frozenset(state.dirt.get(key, ()))
            state.dirt[key] = set()  # what is invalidated during the scan waits for the next
            return state.scans.get(key), dirt

    def store(self, state: RootState, key: Key, scan: DirScan) -> None:
        with self._lock:
            state.scans[key] = scan

    def give_back(self, state: RootState, key: Key, dirt: Iterable[str]) -> None:
        """Dirt a scan took and did not apply (it was cancelled or failed)."""
        with self._lock:
            state.dirt.setdefault(key, set()).update(dirt)

    def catalog(self, key: Hashable) -> object | None:
        with self._lock:
            return self._catalogs.get(key)

    def keep_catalog(self, key: Hashable, catalog: object, generation: int) -> None:
        """Memoise a finished catalog unless something was invalidated since ``generation``."""
        with self._lock:
            if generation == self.generation:
                self._catalogs[key] = catalog

    def invalidate(self, path: str | os.PathLike[str] | None = None) -> None:
        """Note that ``path`` changed (created, edited, deleted); None: everything did."""
        located = None if path is None else _located(os.fspath(path))
        with self._lock:
            self.generation += 1
            self._catalogs.clear()
            for (root, _), state in self._roots.items():
                rel = _EVERYTHING if located is None else _within(located, root)
                if rel is None:
                    if located is None or _within(root, located) is None:
                        continue
                    rel = _EVERYTHING  # a directory above the root
                if rel == ".git" or rel.startswith(".git/"):
                    rel = _EVERYTHING  # ignore rules and tracked paths may have changed
                for dirt in state.dirt.values():
                    dirt.add(rel)


def affected(skills_dir: str, dirt: frozenset[str]) -> frozenset[str] | None:
    """What ``dirt`` changes of the skills directory ``skills_dir``: None to scan it whole,
    else the names of its direct children to list again (empty: reuse its scan as is)."""
    children: set[str] = set()
    inside = f"{skills_dir}/" if skills_dir else ""
    for rel in dirt:
        if rel in (_EVERYTHING, skills_dir) or skills_dir.startswith(rel + "/"):
            return None
        parent, _, name = rel.rpartition("/")
        if name == ".gitignore" and (not parent or skills_dir.startswith(parent + "/")):
            return None
        if inside and not rel.startswith(inside):
            continue
        child = rel[len(inside) :].split("/", 1)[0]
        if child in ("SKILL.md", ".gitignore"):
            return None
        children.add(child)
    return frozenset(children)
