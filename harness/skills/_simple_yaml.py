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

_LINE = re.compile(r"(  )?([A-Za-z][A-Za-z0-9_-]*):(?: (.*))?")
_PLAIN = re.compile(r"[A-Za-z0-9(][^#\t]*")
_QUOTED = re.compile(r"\"([^\"\\]*)\"|'([^']*)'")

Value = str | dict[str, str]


def _scalar(raw: str) -> str | None:
    text = raw.strip(" ")
    quoted = _QUOTED.fullmatch(text)
    if quoted is not None:
        inner = quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
        return inner if "  " not in inner and inner == inner.strip(" ") else None
    if _PLAIN.fullmatch(text) and ": " not in text and not text.endswith(":"):
        return text if "  " not in text else None
    return None


def simple_mapping(text: str) -> dict[str, Value] | None:
    """``text`` as a mapping if it lies in the subset above, else None."""
    if not text.replace("\n", "").isprintable():  # YAML refuses some; Python is stricter
        return None
    found: dict[str, Value] = {}
    nested: dict[str, str] | None = None
    for line in text.split("\n"):
        if not line.strip(" "):
            continue
        match = _LINE.fullmatch(line.rstrip(" "))
        if match is None or (line.startswith(" ") and match.group(1) is None):
            return None
        indented, key, raw = match.groups()
        if indented:
            if nested is None or key in nested or raw is None:
                return None
            value = _scalar(raw)
            if value is None:
                return None
            nested[key] = value
            continue
        if key in found:
            return None
        if raw is None or not raw.strip(" "):
            nested = {}
            found[key] = nested
            continue
        nested = None
        value = _scalar(raw)
        if value is None:
            return None
        found[key] = value
    if not found:
        return None
    return {key: ("" if value == {} else value) for key, value in found.items()}
