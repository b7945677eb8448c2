"""A prefilter for ``deny_read``: the names no pattern can match, ruled out by one search.

    >>> from harness.skills._deny_hint import deny_hint
    >>> hint = deny_hint((".env", "*.pem"))
    >>> hint("run.py") is None, hint("cert.pem") is not None
    (True, True)

A pattern that matches a name at any depth (no slash but a trailing one, no negation, class
or escape) only matches names holding its longest run of plain characters; so when every
pattern is that simple, a name holding none of those runs is denied by none of them, and a
scan decides it without the matcher. A name the hint finds still goes to the matcher.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["deny_hint"]


def deny_hint(patterns: tuple[str, ...]) -> Callable[[str], object] | None:
    """A search that finds nothing in a name no pattern of ``patterns`` denies, or None
    when some pattern is not simple enough to tell (every name goes to the matcher)."""
    literals = _literals(patterns)
    return re.compile("|".join(map(re.escape, literals))).search if literals else None


def _literals(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """For patterns that each match a name at any depth (no slash but a trailing one, no
    negation, class or escape): per pattern its longest run of plain characters, which any
    name it matches contains. None when some pattern is not that simple (check them all)."""
    found: list[str] = []
    for raw in patterns:
        pattern = raw.rstrip(" ")
        if not pattern or pattern.startswith("#"):
            continue  # a blank line or a comment matches nothing
        pattern = pattern.removesuffix("/")
        if pattern.startswith("!") or any(c in pattern for c in "/[\\"):
            return None
        longest = max(pattern.replace("?", "*").split("*"), key=len)
        if not longest:
            return None
        found.append(longest)
    return tuple(found)
