"""``@path`` imports in instruction files and ``.AGENTS/`` files: one file pulls in another.

A line whose whole content (surrounding whitespace aside) is ``@`` followed by a relative
path is replaced by that file's text, resolved against the importing file's directory::

    from harness.workspace._imports import expand

    files = {"AGENTS.md": "Rules.\\n@docs/style.md\\n", "docs/style.md": "Use ruff.\\n"}
    result = expand("AGENTS.md", files["AGENTS.md"], lambda rel: files[rel], max_bytes=1 << 20)
    result.text     # 'Rules.\\nUse ruff.\\n'
    result.imports  # (('docs/style.md', '<sha256>'),)

This module is pure: ``read(rel)`` is the caller's door to the workspace (it applies the
workspace's safety rules and returns the text, or ``Imported(text, real)`` naming the file's
real path, or raises ``ImportRefused`` with the reason), so every rule that is about *files*
lives in one place, and every rule about *text* here:

- lines inside code blocks are never imports: fenced blocks (``` or ~~~ fences, CommonMark's
  rule: a closing fence uses the same character, at least as many times) and indented blocks
  (a line indented by four columns or more, a tab reaching the next multiple of four, at the
  start of the file or after a blank line, and the lines that follow it indented so or blank);
- an absolute path after ``@`` is not an import (the line is plain text), nor is a path with
  whitespace inside (``@alice please review`` is prose);
- imports nest up to ``MAX_DEPTH`` levels (a file's own imports are level 1); a deeper one, a
  cycle (judged on real paths, so a symlink back to a file being expanded is one), a path that
  leaves the workspace, or a file ``read`` refuses leaves the line as it is with a warning;
- the work is bounded by ``max_bytes``: the file's own bytes plus the bytes of every file
  expanded into it are counted, and an import that would take that count over ``max_bytes``
  is not expanded (warning), checked before the file is expanded. The expanded text is never
  longer than the count, so it stays under the cap, and each distinct path is read once per
  expansion and its text reused: a hostile fan-out costs work linear in ``max_bytes``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from harness.errors import HarnessError

__all__ = [
    "MAX_DEPTH",
    "Expansion",
    "ImportRefused",
    "Imported",
    "code_lines",
    "expand",
    "import_target",
]

MAX_DEPTH = 4

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CODE_INDENT = 4
_CHECK_EVERY = 4096  # lines parsed between two calls of the caller's checkpoint


def _never() -> None:
    """The default checkpoint: nothing ever stops an expansion."""


class ImportRefused(HarnessError, ValueError):
    """``read`` cannot supply an imported file; the message is the reason (for the warning)."""


class Imported(NamedTuple):
    """What ``read`` may return instead of the bare text: the text and the file's real
    workspace-relative path (after symlinks), on which cycles are judged."""

    text: str
    real: str


@dataclass(frozen=True, slots=True)
class Expansion:
    """An expanded file: its text, each imported file once (workspace-relative path and
    sha256 of its text as read, in first-import order), and each distinct warning once."""

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


def _indent(line: str) -> int:
    """The columns of ``line``'s leading blanks (a tab reaches the next multiple of four),
    counted up to the code-block indentation."""
    columns = 0
    for ch in line:
        if ch == " ":
            columns += 1
        elif ch == "\t":
            columns += _CODE_INDENT - columns % _CODE_INDENT
        else:
            break
        if columns >= _CODE_INDENT:
            break
    return columns


def code_lines(lines: list[str]) -> list[bool]:
    """Per line, whether it lies inside a code block: fenced (fence lines included) or
    indented (opened at the start or after a blank line; blank lines inside stay in it)."""
    inside: list[bool] = []
    fence: str | None = None
    indented = False
    previous_blank = True  # the start of the file counts as after a blank line
    for line in lines:
        blank = not line.strip()
        opened = _FENCE.match(line)
        if fence is not None:
            inside.append(True)
            closes = (
                opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)
            )
            if closes and opened and not line[opened.end() :].strip():
                fence = None
        elif blank:
            inside.append(indented)
        elif _indent(line) >= _CODE_INDENT and (indented or previous_blank):
            indented = True
            inside.append(True)
        else:
            indented = False
            fence = opened.group(1) if opened else None
            inside.append(fence is not None)
        previous_blank = blank
    return inside


@dataclass(frozen=True, slots=True)
class _File:
    """A file read once per expansion: its text split in lines, where its imports are (line
    index, the path as written, the workspace path it names), its real path, its UTF-8
    size and sha256."""

    lines: tuple[str, ...]
    targets: tuple[tuple[int, str, str], ...]
    real: str
    size: int
    sha: str


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _parse(text: str, rel: str, real: str, checkpoint: Callable[[], None]) -> _File:
    lines = text.split("\n")
    targets: list[tuple[int, str, str]] = []
    base = posixpath.dirname(rel)
    if "@" in text:
        for index, (line, code) in enumerate(zip(lines, code_lines(lines), strict=True)):
            if not index % _CHECK_EVERY:
                checkpoint()
            path = None if code else import_target(line)
            if path is not None:
                targets.append((index, path, posixpath.normpath(posixpath.join(base, path))))
    data = _utf8(text)
    return _File(tuple(lines), tuple(targets), real, len(data), hashlib.sha256(data).hexdigest())


@dataclass(slots=True)
class _State:
    read: Callable[[str], str | Imported]
    checkpoint: Callable[[], None]
    max_bytes: int
    spent: int  # bytes of the file and of every file expanded into it so far
    files: dict[str, _File | ImportRefused] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)
    warnings: dict[str, None] = field(default_factory=dict)

    def file(self, rel: str) -> _File | ImportRefused:
        """``rel`` read through the door once, and its answer reused."""
        known = self.files.get(rel)
        if known is None:
            try:
                got = self.read(rel)
            except ImportRefused as exc:
                known = exc
            else:
                text, real = (got, rel) if isinstance(got, str) else got
                known = _parse(text, rel, real, self.checkpoint)
            self.files[rel] = known
        return known


def _refusal(
    joined: str, stack: tuple[tuple[str, str], ...], names: tuple[str, ...], state: _State
) -> str | None:
    """Why the import of ``joined`` from the top of ``stack`` (whose lexical paths are
    ``names``) is not expanded (read through the door when the path itself is acceptable),
    or None."""
    if joined == ".." or joined.startswith("../"):
        return "the path leaves the workspace"
    if joined in names:
        return f"an import cycle ({' -> '.join((*names, joined))})"
    if len(stack) > MAX_DEPTH:
        return f"imports nest at most {MAX_DEPTH} levels"
    found = state.file(joined)
    if isinstance(found, ImportRefused):
        return str(found)
    for name, real in stack:
        if real == found.real:
            return f"an import cycle ({' -> '.join((*names, joined))}, which is {name})"
    if state.spent + found.size > state.max_bytes:
        return f"it would take the text over the {state.max_bytes}-byte cap"
    return None


def _expand(rel: str, file: _File, state: _State, stack: tuple[tuple[str, str], ...]) -> str:
    if not file.targets:
        return "\n".join(file.lines)
    lines = list(file.lines)
    names = tuple(name for name, _ in stack)
    for index, path, joined in file.targets:
        state.checkpoint()
        why = _refusal(joined, stack, names, state)
        if why is not None:
            state.warnings.setdefault(f"{rel}: import @{path}: not expanded: {why}")
            continue
        found = state.file(joined)
        assert isinstance(found, _File)
        state.spent += found.size
        state.imports.setdefault(joined, found.sha)
        inner = _expand(joined, found, state, (*stack, (joined, found.real)))
        lines[index] = inner.removesuffix("\n")
    return "\n".join(lines)


def expand(
    rel: str,
    text: str,
    read: Callable[[str], str | Imported],
    *,
    max_bytes: int,
    real: Callable[[str], str] | None = None,
    checkpoint: Callable[[], None] = _never,
) -> Expansion:
    """Expand the imports of the file ``rel`` (workspace-relative POSIX path) whose text is
    ``text``; ``read(rel)`` returns an imported file's text (or ``Imported``) or raises
    ``ImportRefused``; ``real(rel)``, when given, is the file's own real path (asked only
    when the file has an import line). ``checkpoint()`` is called often (before each import,
    every few thousand lines parsed): what it raises ends the expansion (a cancelled load)."""
    if "@" not in text:  # the common case costs one scan
        return Expansion(text)
    top = _parse(text, rel, rel, checkpoint)
    if not top.targets:
        return Expansion(text)
    if real is not None:
        top = dataclasses.replace(top, real=real(rel))
    state = _State(read=read, checkpoint=checkpoint, max_bytes=max_bytes, spent=top.size)
    expanded = _expand(rel, top, state, ((rel, top.real),))
    return Expansion(expanded, tuple(state.imports.items()), tuple(state.warnings))
