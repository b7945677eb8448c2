"""Checking the skills settings (``skills_dirs``, ``user_skills_dirs``) of a configuration.

    >>> check_skills_dirs((".claude/skills/",))
    ('.claude/skills',)
    >>> check_user_skills_dirs(("skills",))
    Traceback (most recent call last):
    ...
    ValueError: user_skills_dirs: 'skills' is not an absolute path; write the full path

Plain ``ValueError``: pydantic turns it into the configuration's error, naming the key.
"""

from __future__ import annotations

import posixpath

__all__ = ["DEFAULT_SKILLS_DIRS", "check_skills_dirs", "check_user_skills_dirs"]

DEFAULT_SKILLS_DIRS = (".agents/skills", ".claude/skills", ".codex/skills")
"""Where skills are looked for by default, relative to the root and each chain directory."""


def check_skills_dirs(value: tuple[str, ...]) -> tuple[str, ...]:
    """Each entry a relative "/"-separated path inside the directory it is read from."""
    checked: list[str] = []
    for entry in value:
        path = entry.strip().rstrip("/")
        parts = path.split("/")
        if (
            not path
            or path.startswith("/")
            or "\\" in path
            or any(p in ("", ".", "..") for p in parts)
        ):
            raise ValueError(
                f"skills_dirs: {entry!r} must be a relative path such as '.claude/skills' "
                "(no '..', '.', empty parts or backslashes)"
            )
        checked.append(posixpath.normpath(path))
    return tuple(checked)


def check_user_skills_dirs(value: tuple[str, ...]) -> tuple[str, ...]:
    """Each entry an absolute path (``~`` is not expanded: write the full path)."""
    for entry in value:
        if not posixpath.isabs(entry):
            raise ValueError(
                f"user_skills_dirs: {entry!r} is not an absolute path; write the full path"
            )
    return tuple(value)
