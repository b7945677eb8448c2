"""YAML frontmatter of rule files, read as tolerantly as the agents read it.

    >>> from harness.instruction_files.discovery._frontmatter import split_frontmatter
    >>> text = "---\\nglobs: **/*.ts\\nalwaysApply: false\\n---\\nUse strict mode.\\n"
    >>> found = split_frontmatter(text)
    >>> found.fields, found.body
    ({'globs': '**/*.ts', 'alwaysApply': False}, 'Use strict mode.\\n')

A block opens with a ``---`` line at the very start and closes at the next ``---`` (or
``...``) line; the body is what follows and is all that is ever rendered. The block is read
by PyYAML (its C loader when built with libyaml: about ten times faster than the pure
Python one on a typical Cursor header). Real rule files are not always valid YAML: an
unquoted ``globs: **/*.ts`` is an alias to YAML and ``globs: {a,b}`` a mapping, although every
agent reads both as glob strings. So a block YAML refuses is read again line by line as
``key: value`` pairs (and ``- item`` lists under a bare ``key:``), and the glob keys keep
their text as written whenever YAML made something other than a string or a list of strings
of them. A block neither reading accepts is a ``FrontmatterError`` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

__all__ = ["GLOB_KEYS", "Frontmatter", "FrontmatterError", "split_frontmatter"]

GLOB_KEYS = frozenset({"globs", "applyTo", "paths"})
"""Keys whose values are globs: their text is kept as written when YAML misreads it."""

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PAIR = re.compile(r"([A-Za-z_][\w.-]*)\s*:(?:\s+(.*?))?\s*")
_ITEM = re.compile(r"\s+-\s+(.*?)\s*")


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The fields of a file's frontmatter (empty without one) and the body after it."""

    fields: dict[str, object] = field(default_factory=dict)
    body: str = ""
    present: bool = False


@dataclass(frozen=True, slots=True)
class FrontmatterError:
    """Why a frontmatter block cannot be read, and the file line (1-based) it starts at."""

    line: int
    problem: str

    def __str__(self) -> str:
        return f"frontmatter cannot be parsed (line {self.line}: {self.problem})"


def split_frontmatter(text: str) -> Frontmatter | FrontmatterError:
    """``text``'s frontmatter fields and body (the whole text when there is no block)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return Frontmatter(body=text)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            fields = _fields(block)
            if isinstance(fields, FrontmatterError):
                return fields
            return Frontmatter(fields, body, present=True)
    return FrontmatterError(1, "the block opened by '---' is never closed")


def _fields(block: str) -> dict[str, object] | FrontmatterError:
    try:
        data = yaml.load(block, Loader=_LOADER)  # a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        lenient = _lenient(block)
        if lenient is not None:
            return lenient
        line = 2 + (mark.line if mark is not None else 0)  # the block starts on line 2
        problem = str(getattr(exc, "problem", None) or "not YAML")
        return FrontmatterError(line, problem)
    if data is None:
        return {}
    if not isinstance(data, dict):
        return FrontmatterError(2, f"a {type(data).__name__}, not a mapping of keys")
    fields = {str(key): value for key, value in data.items()}
    raw = _lenient(block) or {}
    for key in GLOB_KEYS & fields.keys():
        if not _strings(fields[key]) and key in raw:
            fields[key] = raw[key]
    return fields


def _strings(value: object) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    )


def _lenient(block: str) -> dict[str, object] | None:
    """``key: value`` lines (and ``- item`` lists under a bare ``key:``), or None."""
    fields: dict[str, object] = {}
    current: list[str] | None = None
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.fullmatch(line)
        if item is not None and current is not None:
            current.append(_scalar(item.group(1)))
            continue
        pair = _PAIR.fullmatch(line)
        if pair is None:
            return None
        key, value = pair.group(1), pair.group(2)
        if value:
            fields[key] = _value(value)
            current = None
        else:
            current = []
            fields[key] = current
    return fields


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _value(text: str) -> object:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if text.startswith("[") and text.endswith("]") and "{" not in text:
        return [_scalar(part.strip()) for part in text[1:-1].split(",") if part.strip()]
    return _scalar(text)
