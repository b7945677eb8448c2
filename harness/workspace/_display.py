"""How workspace paths and hostile text are shown: the one escaper of harness.

A file name is hostile input: an escape sequence in it must not act on a terminal, a newline
must not forge a line of a report, and two different names must never look alike::

    >>> from harness.workspace import display_path, printable, visible
    >>> display_path("docs/\\x1b[31mred\\nAGENTS.md")
    'docs/\\\\x1b[31mred\\\\x0aAGENTS.md'
    >>> printable("agent a\\tb")
    'agent a\\\\x09b'
    >>> visible("line one\\r\\nline two\\x07")
    ('line one\\r\\nline two\\\\x07', 1)

Every warning, report header and path harness prints goes through here: ``printable`` for one
line of caller or workspace input, ``display_path`` for a workspace-relative path (it also
shows undecodable bytes as ``\\xNN`` and doubles backslashes, so each display names one file),
and ``visible`` for multi-line text (the debug print of a prompt), which keeps line breaks and
tabs but escapes every other control character.

Design: one pattern, one replacement. C0 controls and DEL become ``\\xNN``; C1 controls
(U+0080-U+009F) become ``\\u00NN``, since ``\\x80``-``\\xff`` already name undecodable bytes.
"""

from __future__ import annotations

import re

__all__ = ["display_path", "escape_control", "printable", "visible"]

_CONTROL = re.compile(r"\r\n|[\x00-\x1f\x7f-\x9f]")
_LINE_BREAKS = frozenset(("\r\n", "\n", "\t"))  # what ``visible`` keeps
# Surrogates that are no undecodable byte (``surrogateescape`` makes only U+DC80-U+DCFF):
# a lone one in a str from an API or a JSON ``\ud800`` escape, shown as ``\uXXXX``.
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def escape_control(found: re.Match[str]) -> str:
    """The escaped form of one control character (``\\r\\n`` as two)."""
    return "".join(
        f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" for code in map(ord, found.group())
    )


def _keep_line_breaks(found: re.Match[str]) -> str:
    text = found.group()
    return text if text in _LINE_BREAKS else escape_control(found)


def printable(text: str) -> str:
    """``text`` with every control character escaped: for one line that echoes hostile input
    (a warning, a report header)."""
    return _CONTROL.sub(escape_control, text) if _CONTROL.search(text) else text


def visible(text: str) -> tuple[str, int]:
    """``text`` with control characters other than newline, tab and CRLF escaped, and how many
    were: multi-line hostile text (an instruction file) shown on a terminal."""
    found = sum(1 for match in _CONTROL.finditer(text) if match.group() not in _LINE_BREAKS)
    if not found:
        return text, 0
    return _CONTROL.sub(_keep_line_breaks, text), found


def display_path(rel: str) -> str:
    """A printable, unambiguous path, so every file gets its own: undecodable bytes of a name
    are shown as ``\\xNN``, any other lone surrogate as ``\\uXXXX``; control characters
    escaped too; and a backslash is shown doubled (a directory literally named ``\\xff`` must
    not read like the byte 0xFF). Total: every ``str`` has a display that encodes as UTF-8."""
    if rel.isprintable() and "\\" not in rel:
        return rel  # no control character, no surrogate, no backslash: shown as it is
    if "\\" in rel:
        rel = rel.replace("\\", "\\\\")
    rel = printable(rel)
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        rel = _LONE_SURROGATE.sub(_escape_surrogate, rel)
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return rel


def _escape_surrogate(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"
