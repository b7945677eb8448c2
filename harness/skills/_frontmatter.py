"""A ``SKILL.md``'s frontmatter, read as the Agent Skills specification defines it.

    >>> text = "---\\nname: pdf\\ndescription: Read PDFs.\\n---\\nUse pdftotext.\\n"
    >>> parsed, notes = parse_skill(text, "pdf")
    >>> parsed.name, parsed.description, parsed.body, notes
    ('pdf', 'Read PDFs.', 'Use pdftotext.', [])

The frontmatter is the text between a first line ``---`` and the next line that is exactly
``---`` (a ``---`` inside a value or in the body closes nothing). It is YAML read by PyYAML's
base loader (libyaml's when available; ``simple_yaml`` reads the common case, with the
same result, faster), where every scalar is a string: ``version: 1.10``
stays ``"1.10"``, as the specification's string-to-string ``metadata`` wants.

Each problem is a ``Note`` with a level: ``fatal`` (the skill cannot load: no frontmatter,
unparseable YAML, no description), ``warn`` (it loads; the field is noted, or dropped when it
has the wrong type; a description is never shortened) or ``strict`` (only the exact mode
cares: a key outside the specification, kept in ``extra``; ``allowed-tools`` as a list).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, NamedTuple

import yaml

from harness.skills._simple_yaml import simple_mapping

__all__ = ["NAME_MAX", "Note", "Parsed", "parse_skill", "split_frontmatter"]

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_OPEN = re.compile(r"---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_INVALID = re.compile(r"[^a-z0-9-]")
_VALID_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # every rule of name_problems but length


class Note(NamedTuple):
    """One problem of a ``SKILL.md`` and how much it matters (see the module docstring)."""

    level: Literal["fatal", "warn", "strict"]
    text: str


class Parsed(NamedTuple):
    """The fields of one ``SKILL.md`` (those with a wrong type dropped) and its body. A
    tuple: immutable, and built in a fraction of a frozen dataclass's time (one per skill)."""

    name: str
    description: str
    body: str
    license: str | None
    compatibility: str | None
    allowed_tools: tuple[str, ...]
    metadata: Mapping[str, str]
    extra: Mapping[str, object]


def split_frontmatter(text: str) -> tuple[str, str, int] | str:
    """(frontmatter, body, the file line the frontmatter starts on), or why there is none."""
    if text.startswith("---\n"):
        start = 4  # the common opening line, without a match
    else:
        opened = _OPEN.match(text)
        if opened is None:
            return "no frontmatter: SKILL.md must start with a line '---'"
        start = opened.end()
    line = start - 1  # the opening line's "\n": each candidate is a "\n---" found after it
    while (line := text.find("\n---", line)) != -1:
        closed = _CLOSE.match(text, line + 1)
        if closed is not None:
            return text[start : closed.start()], text[closed.end() :], 2
        line += 1
    return "frontmatter not closed: no line '---' after the opening one"


def _load(frontmatter: str, first_line: int) -> Mapping[str, object] | str:
    simple = simple_mapping(frontmatter)  # the common case, as PyYAML would read it
    if simple is not None:
        return simple
    try:
        data = yaml.load(frontmatter, Loader=_LOADER)  # the base loader: strings only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + first_line}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        return f"invalid YAML in frontmatter{where}: {problem}"
    if not isinstance(data, dict):
        return "frontmatter must be a YAML mapping"
    return data


def name_problems(name: str, dir_name: str) -> list[str]:
    """What breaks the specification's rules for a skill's name in directory ``dir_name``."""
    if name == dir_name and len(name) <= NAME_MAX and _VALID_NAME.fullmatch(name):
        return []  # the common case, in one match
    problems: list[str] = []
    if len(name) > NAME_MAX:
        problems.append(f"name {name!r} exceeds the {NAME_MAX} character limit ({len(name)})")
    if name != name.lower():
        problems.append(f"name {name!r} must be lowercase")
    if name.startswith("-") or name.endswith("-"):
        problems.append(f"name {name!r} cannot start or end with a hyphen")
    if "--" in name:
        problems.append(f"name {name!r} cannot contain consecutive hyphens")
    if _INVALID.search(name.lower()):
        problems.append(f"name {name!r} contains invalid characters (only a-z, 0-9 and -)")
    if name != dir_name:
        problems.append(f"directory name {dir_name!r} must match skill name {name!r}")
    return problems


def _name(data: Mapping[str, object], dir_name: str, notes: list[Note]) -> str:
    name = data.get("name")
    if name is None:
        notes.append(Note("warn", f"missing required field 'name'; using {dir_name!r}"))
        return dir_name
    if not isinstance(name, str) or not name.strip():
        notes.append(Note("warn", f"field 'name' must be a non-empty string; using {dir_name!r}"))
        return dir_name
    name = name.strip()
    notes.extend(Note("warn", problem) for problem in name_problems(name, dir_name))
    return name


def _description(data: Mapping[str, object], notes: list[Note]) -> str | None:
    description = data.get("description")
    if description is None:
        notes.append(Note("fatal", "missing required field 'description'"))
        return None
    if not isinstance(description, str) or not description.strip():
        notes.append(Note("fatal", "field 'description' must be a non-empty string"))
        return None
    description = description.strip()
    if len(description) > DESCRIPTION_MAX:
        notes.append(
            Note(
                "warn",
                f"description exceeds the {DESCRIPTION_MAX} character limit "
                f"({len(description)}); kept whole",
            )
        )
    return description


def _text_field(data: Mapping[str, object], key: str, notes: list[Note]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        notes.append(Note("warn", f"field {key!r} must be a string; ignored"))
        return None
    if key == "compatibility" and len(value) > COMPATIBILITY_MAX:
        notes.append(
            Note(
                "warn",
                f"compatibility exceeds the {COMPATIBILITY_MAX} character limit ({len(value)})",
            )
        )
    elif key == "compatibility" and not value.strip():
        notes.append(Note("warn", "compatibility must not be empty"))
    return value


def _metadata(data: Mapping[str, object], notes: list[Note]) -> dict[str, str]:
    value = data.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        notes.append(Note("warn", "field 'metadata' must be a mapping of strings; ignored"))
        return {}
    kept = {key: item for key, item in value.items() if isinstance(item, str)}
    if len(kept) == len(value):
        return kept
    for key in sorted(set(value) - set(kept)):
        notes.append(Note("warn", f"metadata.{key} must be a string; ignored"))
    return kept


def _allowed_tools(data: Mapping[str, object], notes: list[Note]) -> tuple[str, ...]:
    value = data.get("allowed-tools")
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        notes.append(Note("strict", "field 'allowed-tools' must be a space-separated string"))
        return tuple(str(item) for item in value)
    notes.append(Note("warn", "field 'allowed-tools' must be a space-separated string; ignored"))
    return ()


def parse_skill(text: str, dir_name: str) -> tuple[Parsed | None, list[Note]]:
    """The skill a ``SKILL.md``'s decoded ``text`` defines (None when a fatal note says it
    cannot load), and every note about it. ``dir_name``: the directory holding it."""
    split = split_frontmatter(text)
    if isinstance(split, str):
        return None, [Note("fatal", split)]
    frontmatter, body, first_line = split
    data = _load(frontmatter, first_line)
    if isinstance(data, str):
        return None, [Note("fatal", data)]
    notes: list[Note] = []
    unknown = [] if SPEC_FIELDS.issuperset(data) else sorted(set(data) - SPEC_FIELDS)
    if unknown:
        notes.append(Note("strict", f"unexpected field(s) in frontmatter: {', '.join(unknown)}"))
    name = _name(data, dir_name, notes)
    description = _description(data, notes)
    parsed = Parsed(  # positional (a named tuple's keywords cost twice as much), in order:
        name,
        description or "",
        (body.replace("\r\n", "\n") if "\r" in body else body).strip(),  # body
        _text_field(data, "license", notes),
        _text_field(data, "compatibility", notes),
        _allowed_tools(data, notes),
        _metadata(data, notes),
        {key: data[key] for key in unknown} if unknown else {},  # extra
    )
    return (None if description is None else parsed), notes
