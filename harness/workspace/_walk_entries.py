"""What a walk does with the entries of a listed directory that are more than names:
``deny_read`` matches, a ``.gitignore`` to apply, ignored directories holding tracked files.

    >>> from harness.workspace._walk_entries import undenied
    >>> from harness.workspace.deny import DenyRules
    >>> warned = []
    >>> subdirs = ["src", "secrets"]
    >>> undenied(lambda rel, why: warned.append(rel), DenyRules(["secrets/"]), "", None, subdirs)
    >>> subdirs, warned
    (['src'], ['secrets'])

The walk (``harness.workspace._walk``) calls these only for the directories that need them, so
the plain directories of a tree cost it set lookups alone. Every problem is a warning through
``warn`` (workspace-relative path, reason); nothing here raises for what a tree holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Literal

from harness.workspace._gitignore import GITIGNORE, load_gitignore
from harness.workspace._ignore import IgnoreChain, IgnoreFile
from harness.workspace._reading import reason
from harness.workspace.deny import DenyRules

__all__ = ["Warn", "apply_gitignore", "tracked_dirs", "undenied"]

Warn = Callable[[str, str], None]
"""Where a problem goes: ``warn(workspace-relative path, reason)``."""


def undenied(
    warn: Warn,
    deny: DenyRules,
    rel: str,
    named: dict[str, os.DirEntry[str]] | None,
    subdirs: list[str],
) -> dict[str, os.DirEntry[str]] | None:
    """``named`` and ``subdirs`` (in place) without what ``deny_read`` denies, warned."""
    prefix = rel + "/" if rel else ""
    if deny.may_deny_dirs(subdirs):
        kept = [name for name in subdirs if _allowed(warn, deny, prefix + name, True)]
        if len(kept) != len(subdirs):
            subdirs[:] = kept
    if named is None:
        return None
    allowed = {
        name: entry
        for name, entry in named.items()
        if _allowed(warn, deny, prefix + name, entry.is_dir(follow_symlinks=False))
    }
    for name in allowed:  # the walk's first check of named entries next time (few names)
        deny.allowed_name(name)
    return allowed or None


def _allowed(warn: Warn, deny: DenyRules, rel: str, is_dir: bool) -> bool:
    pattern = deny.entry(rel, is_dir)
    if pattern is None:
        return True
    warn(rel, f"not read: it matches the deny_read pattern {pattern!r} (setting deny_read)")
    return False


def tracked_dirs(chain: IgnoreChain, prefix: str, subdirs: list[str], kept: list[str]) -> list[str]:
    """The ignored ``subdirs`` (those not ``kept``) holding tracked files: git reads those
    files, so the walk enters these directories for them alone."""
    keep = set(kept)
    return chain.tracked_dirs(prefix, [name for name in subdirs if name not in keep])


def apply_gitignore(
    warn: Warn, fd: int, entry: os.DirEntry[str], rel: str, chain: IgnoreChain | None
) -> IgnoreChain | Literal[False] | None:
    """The chain with the ``.gitignore`` ``entry`` of directory ``rel`` (open as ``fd``)
    applied, or False (warned) when it exists but cannot be read or is over the cap: then
    what it ignores is unknown, and the caller reads nothing it governs."""
    shown = f"{rel}/{GITIGNORE}" if rel else GITIGNORE
    try:
        if not entry.is_file(follow_symlinks=False):
            if entry.is_symlink():  # git does not follow a symlinked .gitignore either
                warn(shown, "not applied: a symlink (git does not follow it)")
            return chain
    except OSError as exc:
        rules: object = f"cannot be examined ({reason(exc)})"
        problems: list[str] = []
    else:
        rules, problems = load_gitignore(rel, dir_fd=fd)
    if isinstance(rules, str):
        unknown = f"nothing in {rel or '.'!r} is read, since what it ignores is unknown"
        warn(shown, f"{rules}: {unknown}")
        return False
    for problem in problems:
        warn(shown, f"{problem}; the line is ignored, as git does")
    if rules is None:
        return chain
    assert isinstance(rules, IgnoreFile)
    return IgnoreChain((rules,)) if chain is None else chain.extended(rules)
