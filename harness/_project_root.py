"""The project a path belongs to: the nearest directory, at or above it, holding a marker.

::

    from harness import find_project_root

    root = find_project_root("packages/parser")         # the checkout holding .git, or None
    root = find_project_root(".", markers=(".git", ".hg"))

The command line uses it so that ``harness debug`` run inside a package of a monorepo builds
from the repository's root, scoped to that package, rather than missing the root's rules.
A marker is any entry with that name (``.git`` is a directory in a clone, a file in a linked
worktree or a submodule); the search stops at the filesystem root.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from harness.errors import ArgumentError, ArgumentTypeError

__all__ = ["DEFAULT_MARKERS", "check_markers", "find_project_root"]

#: What marks a project's root unless told otherwise.
DEFAULT_MARKERS: tuple[str, ...] = (".git",)


def check_markers(markers: Sequence[str]) -> tuple[str, ...]:
    """The markers as a tuple, refusing what cannot name an entry of a directory."""
    if isinstance(markers, str | bytes):
        raise ArgumentTypeError(
            f"markers must be a sequence of names, not one string: use ({markers!r},)"
        )
    checked = tuple(markers)
    for marker in checked:
        if not isinstance(marker, str):
            raise ArgumentTypeError(f"marker {marker!r}: expected a name (str)")
        if marker in ("", ".", "..") or "/" in marker or "\0" in marker:
            raise ArgumentError(
                f"marker {marker!r}: expected the name of an entry in a directory, such as '.git'"
            )
    return checked


def find_project_root(
    path: str | os.PathLike[str], *, markers: Sequence[str] = DEFAULT_MARKERS
) -> Path | None:
    """The nearest directory at or above ``path`` (resolved) that holds one of ``markers``,
    or ``None`` when no ancestor does. ``path`` need not exist: the search starts at it
    anyway, and a missing directory holds nothing."""
    names = check_markers(markers)
    start = Path(path).resolve()
    for directory in (start, *start.parents):
        if any(os.path.lexists(directory / name) for name in names):
            return directory
    return None
