"""git's ignore rules: ``.gitignore`` files, ``.git/info/exclude`` and tracked files.

What a walk asks, one directory entry at a time, is "does git ignore this path?"::

    >>> from harness.workspace._ignore import IgnoreChain, IgnoreFile
    >>> root, _ = IgnoreFile.parse("", b"build/\\n*.log\\n!keep.log\\n")
    >>> chain = IgnoreChain((root,))
    >>> chain.ignored("build", "build", True), chain.ignored("a.log", "a.log", False)
    (True, True)
    >>> chain.ignored("keep.log", "keep.log", False), chain.kept_dirs("", ["build", "src"])
    (False, ['src'])

Rules (git's ``dir.c``: ``add_patterns_from_buffer``, ``parse_path_pattern``,
``match_basename``, ``match_pathname``, ``last_matching_pattern``; read there, not copied):

- Lines end at ``\\n``, less one ``\\r``; a leading UTF-8 byte order mark is skipped; a line
  stops at a NUL byte; blank lines and lines starting with ``#`` are skipped; unescaped
  trailing spaces are trimmed (``\\ `` keeps one; tabs stay). ``!`` negates; one trailing ``/``
  restricts the line to directories. Patterns are bytes, matched against the path's bytes.
- A pattern with no ``/`` (after the trailing one is removed) matches an entry's name at any
  depth below its file; any other is matched against the path relative to its file's
  directory (a leading ``/`` only anchors) by ``wildmatch`` with ``WM_PATHNAME``.
- The last matching line of a file decides; a deeper file beats a shallower one, and every
  ``.gitignore`` beats ``.git/info/exclude`` (the lowest file of a chain, with base ``""``).
- A path below an ignored directory is ignored whatever any line says: the walk never enters
  ignored directories, so ``ignored`` is only asked about entries of directories it entered.
- A tracked file is never ignored, and an ignored directory that holds tracked files is
  entered for them alone (``tracked_dirs``; its chain is ``only_tracked``).

``prefix_context=False`` reproduces git before 2.52, which matched the rest of a pattern after
its literal prefix as if it began the path (``foo**/bar`` matched ``foobar``); the default is
git's current behaviour. Speed: decisions that depend on the name only (patterns without a
slash) are memoised per file, and anchored patterns are indexed by the number of components
they can match.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from harness.workspace._git_index import LazyTracked, TrackedPaths, git_dirs, has_index
from harness.workspace._reading import read_file, reason
from harness.workspace._wildmatch import (
    Matcher,
    compile_wildmatch,
    literal_prefix_length,
    slash_count,
)

__all__ = [
    "EXCLUDE_MAX_BYTES",
    "IgnoreChain",
    "IgnoreFile",
    "WorkspaceRules",
    "parse_lines",
    "workspace_rules",
]

_BOM = b"\xef\xbb\xbf"
_ENCODING, _ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
_UNKNOWN = (-1, False)  # ``IgnoreFile.check``'s memo miss (no decision is this one)
EXCLUDE_MAX_BYTES = 1024 * 1024
"""Past this size ``.git/info/exclude`` is not applied, and nothing is read (fail closed)."""
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def parse_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(line number, pattern) for each line git turns into a pattern, as git reads them."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data:
        return []
    lines: list[tuple[int, bytes]] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line or line.startswith(b"#"):
            continue
        if line.endswith(b"\r"):
            line = line[:-1]
        line = line.split(b"\0", 1)[0]
        lines.append((number, _trim_trailing_spaces(line)))
    return lines  # a last line without "\n" counts (git appends one)


def _trim_trailing_spaces(line: bytes) -> bytes:
    """Unescaped trailing spaces removed, as git's ``trim_trailing_spaces``."""
    last_space = -1
    index = 0
    size = len(line)
    while index < size:
        byte = line[index]
        if byte == 0x20:
            if last_space < 0:
                last_space = index
        elif byte == 0x5C:  # a backslash escapes the next byte; a final one ends the scan
            index += 1
            if index >= size:
                return line
            last_space = -1
        else:
            last_space = -1
        index += 1
    return line if last_space < 0 else line[:last_space]


@dataclass(frozen=True, slots=True)
class _Rule:
    line: int
    ignores: bool  # False: a "!" line, which re-includes
    dirs_only: bool
    match: Matcher  # the entry's name (basename rules) or its path below the file's base
    prefix: bytes  # a literal every matching path starts with (anchored rules)


def _rule(number: int, line: bytes, prefix_context: bool) -> tuple[_Rule, bool, int | None]:
    """(rule, matches by name only, fixed component count or None)."""
    negative = line.startswith(b"!")
    pattern = line[1:] if negative else line
    prefix_length = literal_prefix_length(pattern)
    dirs_only = pattern.endswith(b"/")
    if dirs_only:
        pattern = pattern[:-1]
    prefix_length = min(prefix_length, len(pattern))
    if b"/" not in pattern:
        match = compile_wildmatch(pattern, pathname=False)
        return _Rule(number, not negative, dirs_only, match, b""), True, None
    if pattern.startswith(b"/"):
        pattern = pattern[1:]
        prefix_length -= 1
    literal = pattern[:prefix_length]
    if prefix_context or prefix_length == 0 or prefix_length == len(pattern):
        match = compile_wildmatch(pattern, pathname=True)
        slashes = slash_count(pattern, pathname=True)
    else:  # git < 2.52: the rest is matched as if it began the path
        rest = compile_wildmatch(pattern[prefix_length:], pathname=True)

        def match(text: bytes, rest: Matcher = rest, cut: int = prefix_length) -> bool:
            return rest(text[cut:])  # the prefix was compared already

        slashes = slash_count(pattern[prefix_length:], pathname=True)
        if slashes is not None:
            slashes += literal.count(b"/")
    components = None if slashes is None else slashes + 1
    return _Rule(number, not negative, dirs_only, match, literal), False, components


def _hit(rule: _Rule, text: bytes, is_dir: bool) -> bool:
    if rule.dirs_only and not is_dir:
        return False
    return text.startswith(rule.prefix) and rule.match(text)


@dataclass(slots=True)
class IgnoreFile:
    """The rules of one ignore file; ``base`` is its directory, workspace-relative."""

    base: str
    basename_rules: tuple[_Rule, ...]
    fixed_rules: dict[int, tuple[_Rule, ...]]
    variable_rules: tuple[_Rule, ...]
    _memo: dict[tuple[str, bool], tuple[int, bool] | None] = field(default_factory=dict)
    origin: str | None = None  # where it was read, when not ``base``'s .gitignore

    @property
    def shown(self) -> str:
        """The file, workspace-relative, as ``git check-ignore -v`` names it."""
        if self.origin is not None:
            return self.origin
        return f"{self.base}/.gitignore" if self.base else ".gitignore"

    @classmethod
    def parse(
        cls, base: str, data: bytes, *, prefix_context: bool = True
    ) -> tuple[IgnoreFile, list[str]]:
        """The rules of an ignore file's bytes, read as git reads them, and a note for each
        line git would discard (git discards none: every line is a pattern, possibly one
        that matches nothing, so the list is always empty)."""
        basename: list[_Rule] = []
        fixed: dict[int, list[_Rule]] = {}
        variable: list[_Rule] = []
        for number, line in parse_lines(data):
            if not line or line == b"!":
                continue  # an empty pattern matches no name
            rule, by_name, components = _rule(number, line, prefix_context)
            if by_name:
                basename.append(rule)
            elif components is None:
                variable.append(rule)
            else:
                fixed.setdefault(components, []).append(rule)
        frozen = {depth: tuple(rules) for depth, rules in fixed.items()}
        return cls(base, tuple(basename), frozen, tuple(variable)), []

    @property
    def empty(self) -> bool:
        return not (self.basename_rules or self.fixed_rules or self.variable_rules)

    def check(self, path: str, name: str, is_dir: bool) -> tuple[int, bool] | None:
        """(line, ignored) of the last matching line for ``path`` (relative to ``base``)."""
        key = (name, is_dir)
        memo = self._memo
        best = memo.get(key, _UNKNOWN)  # (no KeyError raised: every call is a chain's miss)
        if best is _UNKNOWN:
            best = None
            if self.basename_rules:
                text = name.encode(_ENCODING, _ERRORS)  # os.fsencode, without its call
                # ``_hit`` inlined (a miss is the walk's costliest question): a basename rule
                # has no literal prefix to compare
                for rule in reversed(self.basename_rules):
                    if (is_dir or not rule.dirs_only) and rule.match(text):
                        best = (rule.line, rule.ignores)
                        break
            memo[key] = best
        if self.fixed_rules or self.variable_rules:
            rules = self.variable_rules
            fixed = self.fixed_rules.get(path.count("/") + 1)
            if fixed:
                rules = (*fixed, *rules)
            if rules:  # (encoded only when some anchored rule can match it)
                text = path.encode(_ENCODING, _ERRORS)
                for rule in rules:
                    if (best is None or rule.line > best[0]) and _hit(rule, text, is_dir):
                        best = (rule.line, rule.ignores)
        return best

    def depths(self) -> tuple[frozenset[int], bool]:
        """(component counts anchored rules can match, whether some can match any count)."""
        return frozenset(self.fixed_rules), bool(self.variable_rules)


class IgnoreChain:
    """The ignore files that apply to one directory, lowest precedence first
    (``.git/info/exclude``, then ``.gitignore`` files root first, the deepest last), and the
    tracked paths, which no rule ignores.

    A child directory shares its parent's chain unless it has a ``.gitignore`` of its own, so
    the memo below (decisions that depend on the entry name only) is shared by a whole subtree.
    A chain ``only_tracked`` serves the inside of an ignored directory entered for its tracked
    files: only tracked paths (and directories holding some) are not ignored there.
    """

    __slots__ = (
        "_dir_memo",
        "_files",
        "_memo",
        "_parent",
        "kept",
        "name_only",
        "only_tracked",
        "tracked",
    )

    def __init__(
        self,
        files: tuple[IgnoreFile, ...],
        tracked: TrackedPaths | LazyTracked | None = None,
        *,
        only_tracked: bool = False,
        parent: IgnoreChain | None = None,
    ) -> None:
        self._files = files
        self._parent = parent  # the chain less its last file (``_dir_decision``)
        self.tracked = tracked if tracked else None
        self.only_tracked = only_tracked
        self._memo: dict[tuple[str, bool], bool] = {}
        self._dir_memo: dict[str, bool] = {}  # the same decisions for directories, by name
        # Directory names decided "not ignored" by their names alone, and for each component
        # count whether names alone decide there: ``kept_dirs``'s first answer, which the
        # walk also gives inline (no call) for a directory whose subdirectories are all known.
        self.kept: set[str] = set()
        self.name_only: dict[int, bool] = {}

    def extended(self, ignore: IgnoreFile) -> IgnoreChain:
        """This chain with a deeper file applied (inside an ignored directory git reads no
        ``.gitignore``, so an ``only_tracked`` chain stays as it is)."""
        if self.only_tracked or ignore.empty:
            return self
        return IgnoreChain((*self._files, ignore), self.tracked, parent=self)

    def inside_ignored(self) -> IgnoreChain:
        """The chain for an ignored directory entered for its tracked files."""
        return IgnoreChain((), self.tracked, only_tracked=True)

    def _only_names_at(self, components: int) -> bool:
        """Whether no anchored rule can match a path with ``components`` components."""
        try:
            return self.name_only[components]
        except KeyError:
            pass
        answer = True
        for ignore in self._files:
            depth = components - (ignore.base.count("/") + 1 if ignore.base else 0)
            fixed, variable = ignore.depths()
            if variable or depth in fixed:
                answer = False
                break
        self.name_only[components] = answer
        return answer

    def ignored(self, rel: str, name: str, is_dir: bool) -> bool:
        """Whether ``rel`` (workspace-relative, in a directory the walk entered) is ignored.

        A tracked file never is; a directory is when a rule ignores it, even if it holds
        tracked files (``tracked_dirs`` says which ignored directories to enter anyway).
        """
        tracked = self.tracked
        if self.only_tracked:
            if tracked is None:
                return True
            return not (tracked.holds(rel) if is_dir else tracked.tracked(rel))
        components = rel.count("/") + 1
        names_only = self.name_only.get(components)  # ``_only_names_at``, once known
        if names_only is None:
            names_only = self._only_names_at(components)
        if names_only:
            key = (name, is_dir)
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = self._decide(rel, name, is_dir)
        else:
            found = self._decide(rel, name, is_dir)
        # the index is asked only about what a rule ignores (a lazy index stays unread)
        return found and (is_dir or tracked is None or not tracked.tracked(rel))

    def _decide(self, rel: str, name: str, is_dir: bool) -> bool:
        found = self._deciding(rel, name, is_dir)
        return found is not None and found[1][1]

    def deciding(self, rel: str, name: str, is_dir: bool) -> tuple[str, int] | None:
        """The ignore file (as ``IgnoreFile.shown``) and line whose pattern decides ``rel``
        (the last matching one, as ``git check-ignore -v`` reports it), or None."""
        found = self._deciding(rel, name, is_dir)
        return None if found is None else (found[0].shown, found[1][0])

    def _deciding(
        self, rel: str, name: str, is_dir: bool
    ) -> tuple[IgnoreFile, tuple[int, bool]] | None:
        for ignore in reversed(self._files):
            base = ignore.base
            if base:
                if not rel.startswith(base) or rel[len(base) : len(base) + 1] != "/":
                    continue  # not below this file (a caller's mistake; never matched)
                path = rel[len(base) + 1 :]
            else:
                path = rel
            found = ignore.check(path, name, is_dir)
            if found is not None:
                return ignore, found
        return None

    def kept_dirs(self, prefix: str, names: list[str]) -> list[str]:
        """The directory ``names`` (children of ``prefix``) that are not ignored (``names``
        itself when none is: the walk asks this for every directory it lists)."""
        components = prefix.count("/") + 1
        names_only = self.name_only.get(components)
        kept = self.kept
        if names_only and kept.issuperset(names):  # the common case: names seen before
            return names
        if self.only_tracked:
            return [name for name in names if not self.ignored(prefix + name, name, True)]
        if names_only is None:
            names_only = self._only_names_at(components)
        if not names_only:
            return [name for name in names if not self._decide(prefix + name, name, True)]
        memo = self._dir_memo
        ignored = False
        for name in names:
            found = memo.get(name)
            if found is None:
                found = memo[name] = self._dir_decision(prefix, name)
                if not found:
                    kept.add(name)
            if found:
                ignored = True
        return [name for name in names if not memo[name]] if ignored else names

    def _dir_decision(self, prefix: str, name: str) -> bool:
        """``_decide`` for the directory ``name`` in ``prefix``, at a depth where names alone
        decide: the last file's answer, else the parent chain's, from its memo (a nested
        ``.gitignore`` starts an empty memo; its parent's answers hold for the files above)."""
        parent = self._parent
        if parent is None:
            return self._decide(prefix + name, name, True)
        last = self._files[-1]
        rel = prefix + name
        base = last.base
        if not base or (rel.startswith(base) and rel[len(base) : len(base) + 1] == "/"):
            found = last.check(rel[len(base) + 1 :] if base else rel, name, True)
            if found is not None:
                return found[1]
        decided = parent._dir_memo.get(name)
        if decided is None:
            decided = parent._dir_memo[name] = parent._dir_decision(prefix, name)
            if not decided:
                parent.kept.add(name)
        return decided

    def tracked_dirs(self, prefix: str, names: list[str]) -> list[str]:
        """Of the ignored directory ``names`` (children of ``prefix``), those holding tracked
        files: the walk enters them with ``inside_ignored()`` for those files alone."""
        tracked = self.tracked
        if tracked is None or self.only_tracked:
            return []
        return [name for name in names if tracked.holds(prefix + name)]


def _read_exclude(root: str) -> tuple[IgnoreFile | None, str | None]:
    """The rules of ``.git/info/exclude`` (followed if a symlink, as git does), or a
    problem saying why it exists but cannot be applied."""
    dirs = git_dirs(root)
    if dirs is None:
        return None, None
    path = os.path.join(dirs[1], "info", "exclude")
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror or exc})"
    found = read_file(fd, cap=EXCLUDE_MAX_BYTES)  # the one capped reader (closes fd)
    if found.problem == "special":
        return None, None  # git reads only what it can read as a file
    if found.problem in ("size", "grew"):
        return None, f"is over the {EXCLUDE_MAX_BYTES}-byte cap"
    if found.problem is not None:
        assert found.error is not None  # "open" and "read" carry theirs
        return None, f"cannot be read ({reason(found.error)})"
    data = found.data
    parsed, _ = IgnoreFile.parse("", data)
    parsed.origin = ".git/info/exclude"
    return (None if parsed.empty else parsed), None


@dataclass(frozen=True, slots=True)
class WorkspaceRules:
    """What applies to a whole workspace before any ``.gitignore``: ``chain`` (the exclude
    file and the tracked paths; None when there are neither), ``exclude_problem`` (why
    ``.git/info/exclude`` exists but cannot be applied: the caller fails closed, since what
    it ignores is unknown) and ``index_problem`` (why the index cannot be read: then no path
    counts as tracked, which only ever ignores more). ``workspace_rules`` leaves the index
    unread (``LazyTracked``: read on the first question), so its problem is reported by the
    walk that read it and ``index_problem`` stays None."""

    chain: IgnoreChain | None
    exclude_problem: str | None = None
    index_problem: str | None = None


def workspace_rules(root: str) -> WorkspaceRules:
    """The rules every walk of ``root`` starts from (the root's own ``.gitignore`` is the
    walk's to add). Reads ``.git/info/exclude``; the index (cached while unchanged) only when
    a rule ignores something and so whether it is tracked matters."""
    exclude, exclude_problem = _read_exclude(root)
    tracked = LazyTracked(root) if has_index(root) else None  # read when a rule matches
    files = () if exclude is None else (exclude,)
    chain = IgnoreChain(files, tracked) if files or tracked else None
    return WorkspaceRules(chain, exclude_problem)
