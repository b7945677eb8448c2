"""Which workspaces an invalidated git path concerns, when that path lies outside them.

    >>> from harness.instruction_files._git_places import GitPlaces
    >>> known = GitPlaces()
    >>> known.remember("/srv/wt")        # a linked worktree: its index is in the main repo
    >>> known.owners({"/srv/main/.git/worktrees/wt/index"})   # doctest: +SKIP
    {'/srv/wt'}

A workspace's ignore rules read files that need not lie inside it: a linked worktree's index
(under the main repository's ``.git/worktrees/NAME/``), a shared ``info/exclude``, a
symlinked one (``harness.workspace._git_index.git_places``). A file watcher reports those
paths; ``InstructionFiles.invalidate`` asks ``owners`` which workspaces they concern, and
drops those workspaces' sets and snapshots. The places of a workspace are noted before its
first read starts, so an invalidate from then on is never missed.
"""

from __future__ import annotations

import os
import threading

from harness.workspace._git_index import git_places

__all__ = ["GitPlaces"]

REMEMBERED = 1024  # workspaces whose git places are kept (a few paths each)


def _is_within(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip(os.sep) + os.sep)


def _touches(place: str, paths: tuple[str, ...]) -> bool:
    """Whether ``place`` is one of ``paths``, inside one, or a directory holding one."""
    return any(
        place == path or _is_within(place, path) or _is_within(path, place) for path in paths
    )


class GitPlaces:
    """Per workspace (its real path), the git files outside ``<workspace>/.git`` it reads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._places: dict[str, tuple[str, ...]] = {}

    def remember(self, root: str) -> None:
        """Note ``root``'s places, unless known (a few system calls, once per workspace)."""
        if root in self._places:
            return
        places = git_places(root)
        with self._lock:
            if len(self._places) >= REMEMBERED:
                self._places.clear()
            self._places[root] = places

    def owners(self, places: set[str]) -> set[str]:
        """The workspaces whose git places ``places`` (resolved paths) touch. They, and any
        workspace whose own ``.git`` is among ``places``, are forgotten: their places are
        looked up again on their next load."""
        with self._lock:
            owners = {
                root
                for root, paths in self._places.items()
                if paths and any(_touches(place, paths) for place in places)
            }
            for root in list(self._places):
                dot_git = os.path.join(root, ".git")
                if root in owners or any(_touches(place, (dot_git,)) for place in places):
                    del self._places[root]
        return owners
