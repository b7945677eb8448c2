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

# Every line of the subset, blank ones too: an optional two-space indent, a key, and after
# ": " (spaces around allowed) a double- or single-quoted string (quotes kept) or a plain
# scalar (trailing spaces kept), or nothing (a key opening a nested mapping). A line the
# pattern cannot match is skipped by ``findall``, so the count of matches tells. Plain
# scalars are matched greedily: a lazy match retries the rest of the pattern at every
# character and cost half the parse. What the pattern cannot say is checked after it.
_LINES = re.compile(
    r"^(?:(  )?([A-Za-z][A-Za-z0-9_-]*):"
    r"(?: +(\"[^\"\\\n]*\"|'[^'\n]*'|[A-Za-z0-9(][^#\t\n]*))?)? *$\n?",
    re.MULTILINE,
)

Value = str | dict[str, str]


def simple_mapping(text: str) -> dict[str, Value] | None:
    """``text`` as a mapping if it lies in the subset above, else None."""
    if not text.replace("\n", "").isprintable():  # YAML refuses some; Python is stricter
        return None
    lines: list[tuple[str, str, str]] = _LINES.findall(text)
    if len(lines) != text.count("\n") + 1:
        return None  # a line outside the subset
    found: dict[str, Value] = {}
    nested: dict[str, str] | None = None
    opened: list[str] = []
    for indented, key, value in lines:
        if not key:
            continue  # a blank line
        if not value:  # "key:" opens a nested mapping
            if indented or key in found:
                return None
            nested = found[key] = {}
            opened.append(key)
            continue
        if value[0] == '"' or value[0] == "'":  # quoted: no space at either end, none doubled
            value = value[1:-1]
            if "  " in value or value != value.strip(" "):
                return None
        else:  # plain: its trailing spaces are not part of it
            value = value.rstrip(" ")
            if ": " in value or value[-1] == ":" or "  " in value:
                return None
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
