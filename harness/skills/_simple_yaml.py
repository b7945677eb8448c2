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
``(`` and holds no ``#``, no ``": "`` and no tab, or a single- or double-quoted string on
its line with no quote or backslash inside; every character printable. Blank lines are
skipped.
"""

from __future__ import annotations

import re

__all__ = ["simple_mapping"]

# One line of the subset: an optional two-space indent, a key, and after ": " (spaces
# around allowed) a double- or single-quoted string or a plain scalar, or nothing (a key
# opening a nested mapping). What the pattern cannot say is checked after it matches.
_LINE = re.compile(
    r"(  )?([A-Za-z][A-Za-z0-9_-]*):"
    r"(?: +(?:\"([^\"\\]*)\"|'([^']*)'|([A-Za-z0-9(][^#\t]*?)))? *"
)

Value = str | dict[str, str]


def _value(double: str | None, single: str | None, plain: str | None) -> str | None:
    """The scalar a matched line holds, None when it is outside the subset."""
    if plain is not None:
        if ": " in plain or plain.endswith(":") or "  " in plain:
            return None
        return plain
    inner = double if double is not None else single
    if inner is None or "  " in inner or inner != inner.strip(" "):
        return None
    return inner


def simple_mapping(text: str) -> dict[str, Value] | None:
    """``text`` as a mapping if it lies in the subset above, else None."""
    if not text.replace("\n", "").isprintable():  # YAML refuses some; Python is stricter
        return None
    found: dict[str, Value] = {}
    nested: dict[str, str] | None = None
    line_match = _LINE.fullmatch
    for line in text.split("\n"):
        match = line_match(line)
        if match is None:
            if line.strip(" "):
                return None
            continue  # a blank line
        indented, key, double, single, plain = match.groups()
        opens = double is None and single is None and plain is None
        if indented:
            if nested is None or key in nested or opens:
                return None
            value = _value(double, single, plain)
            if value is None:
                return None
            nested[key] = value
            continue
        if key in found:
            return None
        if opens:
            nested = {}
            found[key] = nested
            continue
        nested = None
        value = _value(double, single, plain)
        if value is None:
            return None
        found[key] = value
    if not found:
        return None
    return {key: ("" if value == {} else value) for key, value in found.items()}
