"""Paths never to be read: the ``deny_read`` patterns, matched as ``.gitignore`` lines are.

::

    from harness.workspace.deny import DenyRules

    rules = DenyRules((".env", ".env.*", "secrets/"))
    assert rules.denied("services/api/.env.production") == ".env.*"
    assert rules.denied("secrets/db/password.txt") == "secrets/"   # a denied directory
    assert rules.denied("docs/env.md") is None

A pattern without a slash matches a name at any depth; a matching directory denies everything
below it. The check reads only the path string: it runs before anything is opened, so a denied
file (or a FIFO that would block) is never touched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from harness.workspace._ignore import _ENCODING, _ERRORS, IgnoreChain, IgnoreFile

__all__ = ["DEFAULT_DENY_READ", "DenyRules", "deny_warning"]

DEFAULT_DENY_READ: tuple[str, ...] = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "*.p12")
"""What ``deny_read`` is when not configured (a configured list replaces it)."""


class DenyRules:
    """``denied(rel)``: the first ``deny_read`` pattern that denies workspace-relative ``rel``
    (or one of its directories), or None."""

    __slots__ = (
        "_chain",
        "_memo",
        "_names",
        "_singles",
        "allowed_dirs",
        "allowed_names",
        "names_only",
        "patterns",
    )

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        data = "\n".join(self.patterns).encode("utf-8", "surrogateescape")
        file, _ = IgnoreFile.parse("", data)
        self._chain = IgnoreChain((file,))
        # No pattern holds a slash (the defaults): an entry's name alone decides, so the
        # decisions are memoised by name, and a walk checks a directory's entries with one
        # dict lookup each.
        self.names_only = not (file.fixed_rules or file.variable_rules)
        # the name rules, last first (the last matching one decides), when names alone decide
        self._names = tuple(reversed(file.basename_rules)) if self.names_only else None
        self._singles: dict[str, IgnoreChain] = {}
        self._memo: dict[tuple[str, bool], str | None] = {}
        # Directory names known to be denied by no pattern (a walk checks a directory's
        # subdirectories against it first: one C loop when all were seen before).
        self.allowed_dirs: set[str] = set()
        # Entry names denied by no pattern, as a file nor as a directory (the walk checks a
        # directory's named entries against it first, whatever their type).
        self.allowed_names: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def entry(self, rel: str, is_dir: bool) -> str | None:
        """The pattern denying the entry ``rel`` itself (its directories already allowed)."""
        name = rel.rpartition("/")[2]
        key = (name if self.names_only else rel, is_dir)
        if key in self._memo:
            return self._memo[key]
        if self._names is not None:  # ``self._chain.ignored`` for name rules alone, flat
            text = name.encode(_ENCODING, _ERRORS)
            denies = next(
                (
                    rule.ignores
                    for rule in self._names
                    if (is_dir or not rule.dirs_only) and rule.match(text)
                ),
                False,
            )
        else:
            denies = self._chain.ignored(rel, name, is_dir)
        found = None
        if denies:
            found = next((p for p in self.patterns if self._one(p).ignored(rel, name, is_dir)), "")
        self._memo[key] = found
        return found

    def allowed_name(self, name: str) -> bool:
        """Whether no pattern denies an entry ``name`` as a file nor as a directory (only
        name patterns: then wherever it is); such a name joins ``allowed_names``."""
        if not self.names_only or self.entry(name, False) is not None:
            return False
        if self.entry(name, True) is not None:
            return False
        self.allowed_names.add(name)
        return True

    def may_deny_dirs(self, names: list[str]) -> bool:
        """Whether some directory of ``names`` (the subdirectories of one directory) may be
        denied: False means none is, so the caller need not check them one path at a time."""
        if not self.names_only:
            return bool(names)
        allowed = self.allowed_dirs
        if allowed.issuperset(names):  # the common case: names seen before, one C loop
            return False
        for name in names:
            if name not in allowed:
                if self.entry(name, True) is not None:
                    return True
                allowed.add(name)
        return False

    def denied(self, rel: str, *, is_dir: bool = False) -> str | None:
        """The pattern denying ``rel`` or a directory above it, or None."""
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        for index in range(len(parts)):
            last = index == len(parts) - 1
            found = self.entry("/".join(parts[: index + 1]), is_dir if last else True)
            if found is not None:
                return found
        return None

    def _one(self, pattern: str) -> IgnoreChain:
        chain = self._singles.get(pattern)
        if chain is None:
            file, _ = IgnoreFile.parse("", pattern.encode("utf-8", "surrogateescape"))
            chain = self._singles[pattern] = IgnoreChain((file,))
        return chain


def deny_warning(rel: str, pattern: str) -> str:
    """The warning for a path not read because ``deny_read`` matches it."""
    shown = os.fsdecode(rel)
    return f"{shown}: not read: it matches the deny_read pattern {pattern!r} (setting deny_read)"
