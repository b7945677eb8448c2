"""``.gitignore`` rules, checked one path component at a time as git itself does.

pathspec compiles each gitignore line into a regular expression (the hard, well-kept part);
this module decides which compiled patterns can match an entry and evaluates them the way
git's directory traversal does: an entry is checked against its own path only (ignored
parents are pruned before their children are ever seen), the last matching line of a file
wins, and a deeper ``.gitignore`` overrides a shallower one.

Speed matters because a walk checks every directory entry under every applicable
``.gitignore``: patterns without a slash depend only on (name, is-directory) and are memoised
per file; anchored patterns are indexed by the number of path components they can match, so
an entry is tested only against the few patterns of its depth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pathspec import GitIgnoreSpec

_PS_D_OPT = "(?:(?P<ps_d>/)|$)"
_PS_D = "(?P<ps_d>/)"
_ANY_PREFIX = "^(?:.+/)?"

# Rule kinds.
_ALL = 0  # "*", "**", "/**": every entry
_ALL_DIRS = 1  # "*/", "**/": every directory
_BELOW_TOP = 2  # every entry below the base's top level
_DESCENDANTS = 3  # "a/**": entries strictly inside the matched directory
_EXACT = 4  # the regex must match the whole path


@dataclass(frozen=True, slots=True)
class _Rule:
    index: int
    include: bool  # True: the line ignores; False: a "!" line re-includes
    kind: int
    regex: re.Pattern[str] | None


def _matches(rule: _Rule, path: str, is_dir: bool, components: int) -> bool:
    kind = rule.kind
    if kind == _ALL:
        return True
    if kind == _ALL_DIRS:
        return is_dir
    if kind == _BELOW_TOP:
        return components > 1
    assert rule.regex is not None
    subject = path + "/" if is_dir else path
    if kind == _DESCENDANTS:
        found = rule.regex.match(subject)
        return found is not None and found.end() < len(subject)
    return rule.regex.fullmatch(subject) is not None


def _classify(regex: str) -> tuple[int, bool, int | None]:
    """(kind, depends on the basename only, fixed component count or None)."""
    if regex == ".":
        return _ALL, True, None
    if regex == _PS_D:
        return _ALL_DIRS, True, None
    if regex == "/":
        return _BELOW_TOP, False, None
    if regex.endswith("/") and not regex.endswith(_PS_D):
        return _DESCENDANTS, False, None
    body = regex
    for suffix in (_PS_D_OPT, _PS_D):
        if body.endswith(suffix):
            body = body[: -len(suffix)]
            break
    body = body.replace("[^/]", "")
    if body.startswith(_ANY_PREFIX) and "/" not in body[len(_ANY_PREFIX) :]:
        return _EXACT, True, None
    if "(?:/.+)?" in body or "(?:.+/)" in body:
        return _EXACT, False, None
    return _EXACT, False, body.count("/") + 1


def _as_git_reads(line: str) -> str:
    """``line`` rewritten where pathspec would read it differently from git.

    Git trims trailing spaces unless escaped (``\\ `` keeps one) and keeps other trailing
    whitespace (tabs, ``\\r``, ...); pathspec trims all of it, so what git keeps becomes a
    bracket expression.
    pathspec also lets ``dir/**/`` match ``dir`` itself, which git does not: it becomes the
    equivalent ``dir/**/*/`` (every directory strictly inside).
    """
    body = line.rstrip(" ")
    if len(body) < len(line) and (len(body) - len(body.rstrip("\\"))) % 2 == 1:
        body = body[:-1] + "[ ]"  # an escaped space: git keeps exactly one
    kept = len(body) - len(body.rstrip())  # tabs, \r, ...: git keeps them, pathspec would not
    if kept:
        body = body[: len(body) - kept] + "".join(f"[{char}]" for char in body[len(body) - kept :])
    if body.endswith("/**/"):
        body += "*/"
    return body


@dataclass(slots=True)
class IgnoreFile:
    """The rules of one ``.gitignore``; ``base`` is its directory, workspace-relative."""

    base: str
    basename_rules: tuple[_Rule, ...]
    fixed_rules: dict[int, tuple[_Rule, ...]]
    variable_rules: tuple[_Rule, ...]
    _memo: dict[tuple[str, bool], tuple[int, bool] | None] = field(default_factory=dict)

    @classmethod
    def parse(cls, base: str, data: bytes) -> tuple[IgnoreFile, list[str]]:
        """Compile a ``.gitignore``'s bytes, read as git reads them; returns the file and a
        note for each line git would discard.

        Bytes are decoded as file names are (UTF-8, undecodable bytes as surrogate escapes),
        so a pattern spelled with such bytes matches the name it spells. Lines end at ``\\n``
        only, less one ``\\r`` (``str.splitlines`` would also split at form feeds, U+0085 and
        others, turning one pattern into two). A leading byte order mark is skipped: left in,
        it would turn the first pattern into one that matches nothing.
        """
        basename: list[_Rule] = []
        fixed: dict[int, list[_Rule]] = {}
        variable: list[_Rule] = []
        problems: list[str] = []
        text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
        for number, line in enumerate(text.split("\n"), start=1):
            line = line.removesuffix("\r")
            if not line or line.startswith("#"):
                continue
            line = _as_git_reads(line)
            if not line:
                continue
            try:
                patterns = GitIgnoreSpec.from_lines([line]).patterns
            except Exception as exc:  # an invalid glob: git ignores the line, so do we
                problems.append(f"line {number} ({line!r}) is not a valid pattern: {exc}")
                continue
            for pattern in patterns:
                if pattern.include is None or pattern.regex is None:
                    continue
                kind, by_name, components = _classify(pattern.regex.pattern)
                rule = _Rule(number, bool(pattern.include), kind, pattern.regex)
                if by_name:
                    basename.append(rule)
                elif components is None:
                    variable.append(rule)
                else:
                    fixed.setdefault(components, []).append(rule)
        return (
            cls(
                base,
                tuple(basename),
                {depth: tuple(rules) for depth, rules in fixed.items()},
                tuple(variable),
            ),
            problems,
        )

    @property
    def empty(self) -> bool:
        return not (self.basename_rules or self.fixed_rules or self.variable_rules)

    def check(self, path: str, name: str, is_dir: bool) -> tuple[int, bool] | None:
        """(line, ignored) of the last matching line for ``path`` (relative to ``base``)."""
        key = (name, is_dir)
        try:
            best = self._memo[key]
        except KeyError:
            best = None
            for rule in self.basename_rules:
                if _matches(rule, name, is_dir, 1):
                    best = (rule.index, rule.include)
            self._memo[key] = best
        if self.fixed_rules or self.variable_rules:
            components = path.count("/") + 1
            for rule in (*self.fixed_rules.get(components, ()), *self.variable_rules):
                if (best is None or rule.index > best[0]) and _matches(
                    rule, path, is_dir, components
                ):
                    best = (rule.index, rule.include)
        return best


class IgnoreChain:
    """The ``.gitignore`` files that apply to one directory, root first, deepest last.

    A child directory shares its parent's chain unless it has a ``.gitignore`` of its own, so
    the memo below (decisions that depend on the entry name only) is shared by a whole subtree.
    """

    __slots__ = ("_dir_memo", "_files", "_memo", "_name_only")

    def __init__(self, files: tuple[IgnoreFile, ...]) -> None:
        self._files = files
        self._memo: dict[tuple[str, bool], bool] = {}
        self._dir_memo: dict[str, bool] = {}  # the same decisions for directories, by name
        self._name_only: dict[int, bool] = {}

    def extended(self, ignore: IgnoreFile) -> IgnoreChain:
        return IgnoreChain((*self._files, ignore))

    def _only_names_at(self, components: int) -> bool:
        """Whether no anchored rule can match a path with ``components`` components."""
        try:
            return self._name_only[components]
        except KeyError:
            pass
        answer = True
        for ignore in self._files:
            depth = components - (ignore.base.count("/") + 1 if ignore.base else 0)
            if ignore.variable_rules or depth in ignore.fixed_rules:
                answer = False
                break
        self._name_only[components] = answer
        return answer

    def ignored(self, rel: str, name: str, is_dir: bool) -> bool:
        """Whether ``rel`` (workspace-relative) is ignored by the files of this chain.

        The deepest file with a matching line decides; a ``!`` line there re-includes.
        """
        if self._only_names_at(rel.count("/") + 1):
            key = (name, is_dir)
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = self._decide(rel, name, is_dir)
            return found
        return self._decide(rel, name, is_dir)

    def _decide(self, rel: str, name: str, is_dir: bool) -> bool:
        for ignore in reversed(self._files):
            base = ignore.base
            path = rel[len(base) + 1 :] if base else rel
            found = ignore.check(path, name, is_dir)
            if found is not None:
                return found[1]
        return False

    def kept_dirs(self, prefix: str, names: list[str]) -> list[str]:
        """The directory ``names`` (children of ``prefix``) that are not ignored."""
        if self._only_names_at(prefix.count("/") + 1):
            memo = self._dir_memo
            kept = []
            for name in names:
                found = memo.get(name)
                if found is None:
                    found = memo[name] = self._decide(prefix + name, name, True)
                if not found:
                    kept.append(name)
            return kept
        return [name for name in names if not self._decide(prefix + name, name, True)]
