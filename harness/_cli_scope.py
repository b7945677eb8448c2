"""Where a command-line build starts: the workspace (promoted to its project's root) and the
targets, checked against the mistakes people make at a terminal.

::

    scope = command_scope("packages/parser", [], markers=(".git",), promote=True)
    scope.workspace, scope.targets, scope.notes
    # '/src/mono', ['packages/parser'], ['workspace /src/mono (project root of packages/parser)',
    #                                    'target packages/parser']

Run inside a package of a monorepo, ``harness debug`` builds from the repository's root,
scoped to that package: the package alone would miss the root's rules. ``--target`` paths
stay relative to the workspace; one that only exists relative to the current directory is
refused with the path to give instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness._project_root import find_project_root
from harness.errors import ArgumentError

__all__ = ["Scope", "command_scope"]


@dataclass(frozen=True)
class Scope:
    """The workspace a command builds from, its targets, and the lines that explain a
    promotion (empty when the workspace is used as given)."""

    workspace: str
    targets: list[str]
    notes: list[str] = field(default_factory=list)


def command_scope(
    given: str | None,
    targets: Sequence[str],
    *,
    markers: Sequence[str],
    promote: bool,
    cwd: Path | None = None,
) -> Scope:
    """The scope of a command given WORKSPACE (``None``: the current directory) and its
    ``--target`` paths; ``promote=False`` keeps WORKSPACE as the root."""
    here = Path.cwd() if cwd is None else cwd
    workspace = given if given is not None else str(here)
    scope = Scope(workspace, list(targets))
    if promote:
        scope = _promoted(workspace, list(targets), markers)
    for target in targets:
        _check_target(target, scope.workspace, here)
    return scope


def _promoted(workspace: str, targets: list[str], markers: Sequence[str]) -> Scope:
    real = Path(workspace).resolve()
    root = find_project_root(real, markers=markers)
    if root is None or root == real:
        return Scope(workspace, targets)
    inside = real.relative_to(root).as_posix()
    notes = [f"workspace {root} (project root of {workspace})", f"target {inside}"]
    return Scope(str(root), [inside, *targets], notes)


def _check_target(target: str, workspace: str, cwd: Path) -> None:
    """Refuse a relative ``--target`` that is not under the workspace but is under the
    current directory: the user meant the latter; say what to type."""
    if not target or os.path.isabs(target):
        return
    if os.path.lexists(Path(workspace) / target):
        return
    here = Path(os.path.abspath(cwd / target))
    if not os.path.lexists(here):
        return  # a file about to be created: targets need not exist
    root = Path(workspace).resolve()
    if here.is_relative_to(root):
        relative = here.relative_to(root).as_posix()
        raise ArgumentError(
            f"--target {target!r} does not exist under the workspace {root}, but does relative "
            f"to the current directory: targets are relative to the workspace, so give "
            f"--target {relative}"
        )
    raise ArgumentError(
        f"--target {target!r} does not exist under the workspace {root}; it exists relative "
        "to the current directory, outside the workspace: targets are relative to the "
        "workspace"
    )
