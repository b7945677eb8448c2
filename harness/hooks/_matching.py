"""Which handlers a payload reaches: matchers and the payload fields they read (pure).

Two spellings of a matcher, one meaning once parsed (``None``: every tool; a ``frozenset``:
exact, case-sensitive names; an ``re.Pattern``: searched in the name)::

    >>> import re
    >>> parse_match("Bash|Edit") == frozenset({"Bash", "Edit"}), parse_match("*")
    (True, None)
    >>> claude_matcher("Edit, Write"), claude_matcher("mcp__.*")
    ('Edit|Write', re.compile('mcp__.*'))
    >>> matches(re.compile("mcp__.*"), "mcp__memory__read")
    True
    >>> matches(frozenset({"Edit"}), "NotebookEdit")
    False

``Hooks.register(match=)`` takes exact names or a compiled pattern, and refuses strings that
look like patterns (they would silently never match). Claude Code settings use one string for
both; ``claude_matcher`` applies its rule and returns what ``register`` takes.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from harness.hooks._errors import HookTypeError, HookValueError

__all__ = ["Matcher", "claude_matcher", "matches", "parse_match", "payload_field", "tool_name"]

Matcher: TypeAlias = frozenset[str] | re.Pattern[str] | None
"""A parsed matcher: ``None`` for every tool, exact names, or a pattern searched in the name."""

# Characters that make a matcher look like a glob or a regex (refused in an exact-name match).
_PATTERN_CHARS: Final = frozenset("*?[](){}^$+\\")
# Claude Code: a matcher made only of these is a list of exact names; anything else a regex.
_LIST_CHARS: Final = frozenset(string.ascii_letters + string.digits + "_-|, ")


def parse_match(match: object) -> Matcher:
    """``None``/``"*"`` -> None; ``"Bash|Edit"`` -> exact names; an ``re.Pattern`` as it is."""
    if match is None or match == "*":
        return None
    if isinstance(match, re.Pattern):
        if not isinstance(match.pattern, str):
            raise HookTypeError("hook match pattern must be a str pattern, not bytes")
        return match
    if not isinstance(match, str):
        raise HookTypeError(
            f"hook match must be a str, an re.Pattern or None, got {type(match).__name__}"
        )
    names = match.split("|")
    for tool in names:
        if not tool:
            raise HookValueError(
                f"hook match {match!r} has an empty tool name; "
                "write exact names joined by '|', e.g. 'Bash|Edit', or '*' for all"
            )
        if tool != tool.strip() or any(ch.isspace() for ch in tool):
            raise HookValueError(
                f"hook match {match!r}: tool name {tool!r} contains whitespace; "
                "write 'Bash|Edit', not 'Bash | Edit'"
            )
        if _PATTERN_CHARS.intersection(tool):
            raise HookValueError(
                f"hook match {match!r}: {tool!r} looks like a pattern, but a str match is "
                "exact, case-sensitive tool names; list the names ('Edit|NotebookEdit'), "
                f"or pass a compiled pattern: match=re.compile({match!r})"
            )
    return frozenset(names)


def claude_matcher(matcher: str) -> str | re.Pattern[str] | None:
    """Claude Code's matcher rule, as a ``register(match=)`` value.

    Empty or ``*``: every tool. Only letters, digits, ``_``, ``-``, ``|``, ``,`` and spaces:
    exact names separated by ``|`` or ``,`` (spaces around names ignored). Anything else: a
    regular expression searched in the tool name; ``re.error`` if it does not compile.
    """
    text = matcher.strip()
    if text in ("", "*"):
        return None
    if _LIST_CHARS.issuperset(text):
        names = [name.strip() for name in text.replace(",", "|").split("|")]
        names = [name for name in names if name]
        if not names:
            return None
        return "|".join(dict.fromkeys(names))
    return re.compile(matcher)


def matches(matcher: Matcher, name: str | None) -> bool:
    """Whether a parsed matcher selects the tool ``name`` (``None``: the payload has none)."""
    if matcher is None:
        return True
    if name is None:
        return False
    if type(matcher) is frozenset:
        return name in matcher
    return matcher.search(name) is not None  # type: ignore[union-attr]


def payload_field(payload: Any, key: str) -> Any:
    """``payload[key]`` for a mapping, else the attribute; ``None`` when absent."""
    if type(payload) is dict or isinstance(payload, Mapping):
        return payload.get(key)
    return getattr(payload, key, None)


def tool_name(payload: Any) -> str | None:
    """The payload's ``tool_name``; anything but a ``str`` counts as absent (never matches)."""
    name = (
        payload.get("tool_name") if type(payload) is dict else payload_field(payload, "tool_name")
    )
    return name if type(name) is str or isinstance(name, str) else None
