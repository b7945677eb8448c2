"""git's ``wildmatch`` (the glob dialect of ``.gitignore``), matched in linear time.

A pattern is translated once into an equivalent regular expression over bytes and run by an
engine whose time is linear in the text: RE2 (``google-re2``, an automaton: no backtracking)
for every pattern that could backtrack, Python's ``re`` only where backtracking is provably
bounded (at most one unbounded repetition and a short pattern: at most ``len(text) *
_SMALL`` steps), and plain byte comparisons for literal and ``*literal`` patterns::

    >>> from harness.workspace._wildmatch import compile_wildmatch
    >>> match = compile_wildmatch(b"src/**/*.py[cod]", pathname=True)
    >>> match(b"src/a/b/x.pyc"), match(b"src/x.pyc"), match(b"srcx.pyc")
    (True, True, False)
    >>> compile_wildmatch(b"*a*a*a*a*a*a*a*b", pathname=True)(b"a" * 200)
    False

Semantics are those of git's ``wildmatch.c`` (read there, not copied), bytes throughout (a
``?`` is one byte, so one UTF-8 character of two bytes needs ``??``):

- ``\\x`` is ``x``; a trailing lone ``\\`` matches nothing.
- ``?`` is one byte, ``[...]`` one byte of a set: ``!`` or ``^`` first negates; ``]`` first
  is literal; ``a-z`` ranges compare bytes (a range's end may be escaped; ``-`` first or
  last is literal); ``[:alpha:]``, ``[:digit:]`` ... are git's locale-free ASCII classes; an
  unknown class name or an unclosed ``[`` makes the whole pattern match nothing. With
  ``pathname`` neither ever matches ``/``.
- ``*`` is any run of bytes, without ``/`` when ``pathname``. ``**`` (any run of stars)
  crosses ``/`` only when it is a whole component: at the start or after ``/``, and at the
  end or before ``/`` (or ``\\/``); elsewhere it is ``*``. ``**/`` so placed also matches
  nothing at all (zero directories); ``**\\/`` does not.

git's matcher backtracks (exponentially before git 2.41); abandoning a star early
(``WM_ABORT_*``) is an optimisation there, so the language is regular and the translation
exact. ``tests/workspace/test_wildmatch.py`` runs git's own ``t3070`` table through it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from harness.errors import HarnessError

__all__ = [
    "LONGEST_TEXT",
    "Matcher",
    "compile_wildmatch",
    "literal_prefix_length",
    "matches_nothing",
    "slash_count",
    "wildmatch",
]

Matcher = Callable[[bytes], bool]

_SLASH: Final = 0x2F
LONGEST_TEXT: Final = 4096
"""PATH_MAX on Linux: no path a walk meets is longer, so a pattern that needs more bytes than
this matches nothing the walk can meet, and is not compiled (which bounds what RE2 compiles,
holding the GIL, to a few milliseconds)."""
_SMALL: Final = 24  # tokens up to which one star may run on Python's re (backtracking bounded)
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.encoding = re2.Options.Encoding.LATIN1  # bytes in, bytes matched
_RE2_OPTIONS.dot_nl = True
_RE2_OPTIONS.never_capture = True
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.max_mem = 64 << 20  # a budget, not an allocation; the DFA falls back to the NFA

# git's ctype (sane-ctype.h, ctype.c): ASCII only, locale free.
_CLASSES: Final[dict[bytes, frozenset[int]]] = {
    b"alnum": frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"alpha": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset((*range(0x20), 0x7F)),
    b"digit": frozenset(b"0123456789"),
    b"graph": frozenset(range(0x21, 0x7F)),
    b"lower": frozenset(b"abcdefghijklmnopqrstuvwxyz"),
    b"print": frozenset(range(0x20, 0x7F)),
    b"punct": frozenset(c for c in range(0x21, 0x7F) if not chr(c).isalnum()),
    b"space": frozenset(b" \t\n\r"),  # git's isspace: not \v nor \f
    b"upper": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    b"xdigit": frozenset(b"0123456789ABCDEFabcdef"),
}
_GLOB_SPECIAL: Final = frozenset(b"*?[\\")
_ALL_BYTES: Final = frozenset(range(1, 256))  # a name never holds NUL
_NOT_SLASH: Final = _ALL_BYTES - {0x2F}

# Token kinds of a translated pattern.
_LIT, _SET, _STAR, _ANYSTR, _DIRS = range(5)
_Token = tuple[int, bytes | frozenset[int] | None]


class _Never(HarnessError, ValueError):
    """The pattern can match no text (git: WM_ABORT_ALL whatever the text); internal, never
    raised out of this module."""


def literal_prefix_length(pattern: bytes) -> int:
    """Bytes before the first glob-special byte (git's ``simple_length``)."""
    for index, byte in enumerate(pattern):
        if byte in _GLOB_SPECIAL:
            return index
    return len(pattern)


def _bracket(pattern: bytes, start: int) -> tuple[frozenset[int], bool, int]:
    """(bytes listed, negated, index after the closing ``]``) of the set opening at
    ``start`` (the index after ``[``), parsed as git's dowild parses it."""
    size = len(pattern)

    def at(index: int) -> int:
        return pattern[index] if index < size else 0

    p = start
    negated = at(p) in (0x21, 0x5E)  # ! ^
    if negated:
        p += 1
    members: set[int] = set()
    prev = 0
    while True:
        ch = at(p)
        if ch == 0:
            raise _Never
        if ch == 0x5C:  # backslash: the next byte, literally
            p += 1
            ch = at(p)
            if ch == 0:
                raise _Never
            members.add(ch)
        elif ch == 0x2D and prev and at(p + 1) not in (0, 0x5D):  # a range prev-end
            p += 1
            ch = at(p)
            if ch == 0x5C:
                p += 1
                ch = at(p)
                if ch == 0:
                    raise _Never
            members.update(range(prev, ch + 1))
            ch = 0
        elif ch == 0x5B and at(p + 1) == 0x3A:  # "[:" opens a class
            name_start = p + 2
            end = pattern.find(b"]", name_start)
            if end < 0:
                raise _Never
            if end - name_start - 1 < 0 or pattern[end - 1] != 0x3A:
                members.add(0x5B)  # no ":]": a plain "[" (parsing resumes after it)
            else:
                cls = _CLASSES.get(pattern[name_start : end - 1])
                if cls is None:
                    raise _Never  # git: a malformed class aborts the whole match
                members.update(cls)
                p = end
                ch = 0
        else:
            members.add(ch)
        prev = ch
        p += 1
        if at(p) == 0x5D:
            return frozenset(members), negated, p + 1


def _tokens(pattern: bytes, pathname: bool) -> list[_Token]:
    """The pattern as a list of tokens; raises ``_Never`` when it can match nothing."""
    tokens: list[_Token] = []
    size = len(pattern)
    p = 0
    while p < size:
        ch = pattern[p]
        if ch == 0x5C:  # backslash
            if p + 1 >= size:
                raise _Never
            tokens.append((_LIT, pattern[p + 1 : p + 2]))
            p += 2
        elif ch == 0x3F:  # ?
            tokens.append((_SET, _NOT_SLASH if pathname else _ALL_BYTES))
            p += 1
        elif ch == 0x5B:  # [
            members, negated, p = _bracket(pattern, p + 1)
            chosen = (_ALL_BYTES - members) if negated else (members & _ALL_BYTES)
            if pathname:
                chosen = chosen - {_SLASH}
            if not chosen:
                raise _Never
            tokens.append((_SET, frozenset(chosen)))
        elif ch == 0x2A:  # *
            first = p
            while p < size and pattern[p] == 0x2A:
                p += 1
            tokens.append(_star(pattern, first, p, pathname))
            if tokens[-1][0] == _DIRS:
                p += 1  # "**/" took its slash
        else:
            tokens.append((_LIT, bytes((ch,))))
            p += 1
    return tokens


def _star(pattern: bytes, first: int, end: int, pathname: bool) -> _Token:
    """The token of the run of stars ``pattern[first:end]``."""
    if not pathname:
        return (_ANYSTR, None)
    if end - first == 1:
        return (_STAR, None)
    whole = first == 0 or pattern[first - 1] == _SLASH
    rest = pattern[end : end + 2]
    if whole and (not rest or rest[:1] == b"/" or rest == b"\\/"):
        return (_DIRS, None) if rest[:1] == b"/" else (_ANYSTR, None)
    return (_STAR, None)


@functools.lru_cache(maxsize=1024)
def _class(members: frozenset[int]) -> bytes:
    ordered = sorted(members)
    parts: list[bytes] = []
    index = 0
    while index < len(ordered):
        low = high = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == high + 1:
            index += 1
            high = ordered[index]
        parts.append(b"\\x%02x" % low if low == high else b"\\x%02x-\\x%02x" % (low, high))
        index += 1
    return b"[" + b"".join(parts) + b"]"


def _regex(tokens: list[_Token]) -> bytes:
    out: list[bytes] = []
    for kind, value in tokens:
        if kind == _LIT:
            assert isinstance(value, bytes)
            out.append(b"\\x%02x" % value[0])
        elif kind == _SET:
            assert isinstance(value, frozenset)
            out.append(_class(value))
        elif kind == _STAR:
            out.append(b"[^/]*")
        elif kind == _ANYSTR:
            out.append(b"(?:.*)")
        else:
            out.append(b"(?:.*/)?")
    return b"".join(out)


def _never(text: bytes) -> bool:
    return False


def _always(text: bytes) -> bool:
    return True


def compile_wildmatch(pattern: bytes, *, pathname: bool) -> Matcher:
    """A function telling whether a whole text (of at most ``LONGEST_TEXT`` bytes) matches
    ``pattern`` (git's ``wildmatch`` with ``WM_PATHNAME`` when ``pathname``, else with no
    flags)."""
    try:
        tokens = _tokens(pattern, pathname)
    except _Never:
        return _never
    kinds = [kind for kind, _ in tokens]
    if sum(kind in (_LIT, _SET) for kind in kinds) > LONGEST_TEXT:
        return _never
    if all(kind == _LIT for kind in kinds):
        literal = b"".join(value for _, value in tokens if isinstance(value, bytes))
        return literal.__eq__
    if kinds == [_ANYSTR]:
        return _always
    if kinds[0] in (_STAR, _ANYSTR) and all(kind == _LIT for kind in kinds[1:]):
        suffix = b"".join(value for _, value in tokens[1:] if isinstance(value, bytes))
        if kinds[0] == _ANYSTR:
            return lambda text: text.endswith(suffix)
        cut = len(suffix)
        return lambda text: text.endswith(suffix) and text.count(b"/", 0, len(text) - cut) == 0
    regex = _regex(tokens)
    unbounded = sum(kind in (_STAR, _ANYSTR, _DIRS) for kind in kinds)
    if unbounded <= 1 and len(tokens) <= _SMALL:
        full: Callable[[bytes], object] = re.compile(regex, re.DOTALL).fullmatch
    else:
        full = re2.compile(regex, _RE2_OPTIONS).fullmatch
    return lambda text: full(text) is not None


def matches_nothing(matcher: Matcher) -> bool:
    """Whether ``matcher`` (from ``compile_wildmatch``) is the one for a pattern that can
    match no text (an unclosed ``[``, an unknown class, longer than any path)."""
    return matcher is _never


def slash_count(pattern: bytes, *, pathname: bool = True) -> int | None:
    """The number of ``/`` in every text ``pattern`` matches, or None when it varies."""
    try:
        tokens = _tokens(pattern, pathname)
    except _Never:
        return None
    if not pathname or any(kind in (_ANYSTR, _DIRS) for kind, _ in tokens):
        return None
    return sum(kind == _LIT and value == b"/" for kind, value in tokens)


def wildmatch(pattern: bytes, text: bytes, *, pathname: bool = True) -> bool:
    """Whether ``text`` matches ``pattern`` (uncached: compile once for repeated use)."""
    return bool(compile_wildmatch(pattern, pathname=pathname)(text))
