"""Scoping a load to its targets: the ``targets=`` of ``InstructionFiles.load``.

    >>> import anyio, functools, os, tempfile
    >>> from harness.workspace import resolve_workspace
    >>> from harness.instruction_files.discovery._scoping import scope_for
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> os.makedirs(os.path.join(root, "pkg", "src"))
    >>> find = functools.partial(scope_for, root, None, ["pkg/src/new.py"], prune=())
    >>> anyio.run(find).directories   # part of the cache key; "" is the root
    ('', 'pkg', 'pkg/src')

The chains themselves are ``harness.workspace._targets`` (resolved through descriptors); this
module is the ``InstructionFiles`` side: they are resolved on every load, cache hit or not (a
few system calls per level, on the event loop like the workspace path, or in a worker thread
when that would take more: ``resolve_scope``), and a set cached for one spelling of a chain
is handed to a load of another spelling under that load's own targets.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence

from harness.instruction_files._models import InstructionSet
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._reader import applied, walk_workspace
from harness.workspace._targets import Scope, resolve_scope
from harness.workspace.deny import DenyRules

__all__ = ["Targets", "applied", "named", "scope_for"]

Targets = Sequence[str | os.PathLike[str]]
"""What ``targets=`` takes (one path alone is accepted too: it is one target)."""


async def scope_for(
    root: str,
    given: str | None,
    targets: Targets,
    *,
    prune: Iterable[str],
    deny_read: Iterable[str] = (),
) -> Scope | None:
    """The scope of ``targets`` in the workspace whose real path is ``root`` (None: no
    targets, the full walk). Raises ``TargetOutsideWorkspace``."""
    if isinstance(targets, str | os.PathLike):
        targets = (targets,)  # one path, not a sequence of one-letter targets
    if not targets:
        return None
    deny = DenyRules(deny_read)
    return await resolve_scope(root, targets, prune=prune, workspace=given, deny=deny)


def named(found: InstructionSet, scope: Scope | None) -> InstructionSet:
    """``found`` under the targets of this load's ``scope``, with the path rules no target
    matches left out (all of them without targets)."""
    targets = scope.targets if scope is not None else ()
    return applied(found, targets)


def scoped_walk(
    root: str,
    settings: InstructionFilesSettings,
    stop: threading.Event | None = None,
    *,
    scope: Scope,
) -> tuple[InstructionSet, None]:
    """A scoped read's walk: only ``scope``'s chains, and no snapshot (a reload after an edit
    starts from a full walk's snapshot; a scoped read is a few directories anyway)."""
    return walk_workspace(root, settings, stop, scope=scope), None
