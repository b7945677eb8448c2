"""``@path`` imports in instruction files and ``.AGENTS/`` files: one file pulls in another.

A line whose whole content (surrounding whitespace aside) is ``@`` followed by a relative
path is replaced by that file's text, resolved against the importing file's directory::

    from harness.workspace.imports import expand

    files = {"AGENTS.md": "Rules.\\n@docs/style.md\\n", "docs/style.md": "Use ruff.\\n"}
    result = expand("AGENTS.md", files["AGENTS.md"], lambda rel: files[rel], max_bytes=1 << 20)
    result.text     # 'Rules.\\nUse ruff.\\n'
    result.imports  # (('docs/style.md', '<sha256>'),)

This module is pure: ``read(rel)`` is the caller's door to the workspace (it applies the
workspace's safety rules and returns the text, or raises ``ImportRefused`` with the reason),
so every rule that is about *files* lives in one place, and every rule about *text* here:

- lines inside fenced code blocks (``` or ~~~ fences, CommonMark's rule: a closing fence uses
  the same character, at least as many times) are never imports;
- an absolute path after ``@`` is not an import (the line is plain text), nor is a path with
  whitespace inside (``@alice please review`` is prose);
- imports nest up to ``MAX_DEPTH`` levels (a file's own imports are level 1); a deeper one, a
  cycle, a path that leaves the workspace, or a file ``read`` refuses leaves the line as it is
  with a warning saying why;
- an import that would take the expanded text over ``max_bytes`` is not expanded (warning).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.errors import HarnessError

__all__ = ["MAX_DEPTH", "Expansion", "ImportRefused", "expand", "import_target"]

MAX_DEPTH = 4

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class ImportRefused(HarnessError, ValueError):
    """``read`` cannot supply an imported file; the message is the reason (for the warning)."""


@dataclass(frozen=True, slots=True)
class Expansion:
    """An expanded file: its text, each imported file once (workspace-relative path and
    sha256 of its text as read, in first-import order), and a warning per refused line."""

    text: str
    imports: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()


def import_target(line: str) -> str | None:
    """The relative path a line imports, or None when the line is not an import."""
    stripped = line.strip()
    if len(stripped) < 2 or stripped[0] != "@":
        return None
    path = stripped[1:]
    if path.startswith("/") or any(ch.isspace() for ch in path):
        return None
    return path


@dataclass(slots=True)
class _State:
    read: Callable[[str], str]
    max_bytes: int
    size: int
    imports: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _lines_outside_fences(lines: list[str]) -> list[bool]:
    """Per line, whether it lies outside every fenced code block (fence lines are inside)."""
    outside: list[bool] = []
    fence: str | None = None
    for line in lines:
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
            outside.append(False)
        elif fence is not None:
            outside.append(False)
            closes = (
                opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)
            )
            if closes and opened and not line[opened.end() :].strip():
                fence = None
        else:
            outside.append(True)
    return outside


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _expand(rel: str, text: str, state: _State, stack: tuple[str, ...]) -> str:
    lines = text.split("\n")
    depth = len(stack)  # the imports of the top file are level 1
    for index, (line, outside) in enumerate(zip(lines, _lines_outside_fences(lines), strict=True)):
        path = import_target(line) if outside else None
        if path is None:
            continue
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
        where = f"{rel}: import @{path}"
        if joined == ".." or joined.startswith("../"):
            state.warnings.append(f"{where}: not expanded: the path leaves the workspace")
            continue
        if joined in stack:
            chain = " -> ".join((*stack, joined))
            state.warnings.append(f"{where}: not expanded: an import cycle ({chain})")
            continue
        if depth > MAX_DEPTH:
            state.warnings.append(f"{where}: not expanded: imports nest at most {MAX_DEPTH} levels")
            continue
        try:
            content = state.read(joined)
        except ImportRefused as exc:
            state.warnings.append(f"{where}: not expanded: {exc}")
            continue
        imports, warnings, size = dict(state.imports), len(state.warnings), state.size
        state.imports.setdefault(joined, hashlib.sha256(_utf8(content)).hexdigest())
        state.size += len(_utf8(content)) - len(_utf8(line))
        inner = _expand(joined, content, state, (*stack, joined))
        if state.size > state.max_bytes:  # undo this import and all it pulled in
            state.imports, state.size = imports, size
            del state.warnings[warnings:]
            state.warnings.append(
                f"{where}: not expanded: it would take the text over the {state.max_bytes}-byte cap"
            )
            continue
        lines[index] = inner.removesuffix("\n")
    return "\n".join(lines)


def expand(rel: str, text: str, read: Callable[[str], str], *, max_bytes: int) -> Expansion:
    """Expand the imports of the file ``rel`` (workspace-relative POSIX path) whose text is
    ``text``; ``read(rel)`` returns an imported file's text or raises ``ImportRefused``."""
    if "@" not in text:  # the common case costs one scan
        return Expansion(text)
    state = _State(read=read, max_bytes=max_bytes, size=len(_utf8(text)))
    expanded = _expand(rel, text, state, (rel,))
    return Expansion(expanded, tuple(state.imports.items()), tuple(state.warnings))
