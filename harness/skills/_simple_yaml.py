"""A fast path for the frontmatter most skills have: ``key: value`` lines, one nested mapping.

    >>> simple_mapping("name: pdf\\ndescription: Read PDFs.\\nmetadata:\\n  version: '1.0'\\n")
    {'name': 'pdf', 'description': 'Read PDFs.', 'metadata': {'version': '1.0'}}
    >>> simple_mapping("description: a: b\\n") is None    # not in the subset: PyYAML decides
    True

Measured on 1,000 skills, PyYAML's base loader (libyaml's scanner, Python's constructor) costs
about as much as the whole walk and read; most frontmatter is a handful of plain lines. So a
text entirely inside a small subset of YAML is read here, giving exactly what
``yaml.load(text, BaseLoader)`` gives (a differential test holds it to that), and anything
else (``None``) goes to PyYAML. The subset: top-level ``key: value`` lines and ``key:`` lines
followed by two-space-indented ``key: value`` lines; a key is ``[A-Za-z][A-Za-z0-9_-]*``,
used once per mapping; a value is a plain scalar that starts with a letter, a digit or
``(`` and holds no ``#``, no ``": "``, no two spaces in a row and no tab, or a single- or
double-quoted string alone on its line, with no quote of its kind inside, no backslash in a
double-quoted one, no space at either end and no two in a row; every character printable.
Blank lines (spaces only) are skipped.
"""

from __future__ import annotations

import re

__all__ = ["simple_mapping"]

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# Keys most frontmatter uses (the specification's, and metadata's author and version),
# each a key of the subset: a set lookup before the pattern.
_COMMON_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    | {"author", "version"}
)
_PLAIN_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789(")

Value = str | dict[str, str]


def _quoted(value: str) -> str | None:
    """The quoted scalar ``value`` (the rest of its line after ``key:`` and its spaces,
    starting with its quote), None when it is outside the subset."""
    first = value[0]
    end = value.find(first, 1)  # on its line, no space at either end, none doubled
    if end == -1 or value[end + 1 :].strip(" "):
        return None
    inner = value[1:end]
    if (first == '"' and "\\" in inner) or "  " in inner or inner != inner.strip(" "):
        return None
    return inner


def simple_mapping(text: str) -> dict[str, Value] | None:
    """``text`` as a mapping if it lies in the subset above, else None. String methods, one
    line at a time: a regular expression per line cost twice as much."""
    if not text.replace("\n", "").isprintable():  # YAML refuses some; Python is stricter
        return None
    found: dict[str, Value] = {}
    nested: dict[str, str] | None = None
    opened: list[str] = []
    for line in text.split("\n"):
        indented = line.startswith("  ")
        key, colon, rest = line[2:].partition(":") if indented else line.partition(":")
        if not colon:
            if line.strip(" "):
                return None
            continue  # a blank line
        if key not in _COMMON_KEYS and _KEY.fullmatch(key) is None:
            return None
        after = rest.lstrip(" ")
        if not after:  # "key:" opens a nested mapping
            if indented or key in found:
                return None
            nested = found[key] = {}
            opened.append(key)
            continue
        if rest[0] != " ":
            return None
        if after[0] in _PLAIN_FIRST:  # a plain scalar; its trailing spaces are not part of it
            value = after.rstrip(" ")
            if "#" in after or ": " in value or value[-1] == ":" or "  " in value:
                return None
        else:
            quoted = _quoted(after) if after[0] == '"' or after[0] == "'" else None
            if quoted is None:
                return None
            value = quoted
        if indented:
            if nested is None or key in nested:
                return None
            nested[key] = value
            continue
        if key in found:
            return None
        nested = None
        found[key] = value
    for key in opened:
        if not found[key]:
            found[key] = ""  # "key:" with nothing below it is an empty scalar
    return found or None
