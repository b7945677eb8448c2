"""Path globs of rule files: split, scoped, brace-expanded and matched as git matches.

    >>> from harness.instruction_files.discovery._globs import glob_list, scoped, matching
    >>> globs, problems = glob_list("**/*.{ts,tsx}, docs/**")
    >>> globs, problems
    (['**/*.{ts,tsx}', 'docs/**'], [])
    >>> rule = scoped(globs, "web")                 # a rule of web/.cursor/rules/
    >>> rule
    ('web/**/*.{ts,tsx}', 'web/docs/**')
    >>> matching(rule, ["web/src/app.tsx", "api/x.ts"])
    ('web/**/*.{ts,tsx}', 'web/src/app.tsx')

A string of globs is split at commas outside braces; a list is taken item by item. A glob is
relative to the directory that scopes its rule file, so it is stored workspace-relative (that
directory's path, glob characters escaped, then the glob; a leading ``./`` or ``/`` is
dropped). Matching expands braces (``{a,b}``, nested, at most ``MAX_PATTERNS`` patterns per
rule) and runs each pattern through the wildmatch of the ignore rules with ``pathname``
(``**`` crosses directories, ``*`` stays within one) against workspace-relative targets. A
glob that can match nothing (an unclosed ``[``, an unknown ``[:class:]``) or expands past the
bound matches nothing; ``problems`` says why, once, when the rule is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.workspace._wildmatch import Matcher, compile_wildmatch, matches_nothing

__all__ = ["MAX_PATTERNS", "expand_braces", "glob_list", "glob_problems", "matching", "scoped"]

MAX_PATTERNS = 1000
"""Patterns one rule's globs may expand to; past it the rule matches nothing (warned)."""

_SPECIAL = frozenset("*?[\\{},")


def glob_list(value: object) -> tuple[list[str], list[str]]:
    """The globs of a frontmatter value (a string split at commas outside braces, or a list
    of strings), and what is wrong with it."""
    items: list[object] = list(value) if isinstance(value, list | tuple) else [value]
    globs: list[str] = []
    problems: list[str] = []
    for item in items:
        if not isinstance(item, str):
            problems.append(f"glob {item!r} is not a string: ignored")
            continue
        globs.extend(part for part in _split(item) if part)
    return globs, problems


def _split(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and not depth:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return parts


def scoped(globs: Iterable[str], home: str) -> tuple[str, ...]:
    """``globs`` made workspace-relative: below ``home`` (``""``: the workspace root)."""
    prefix = "".join("\\" + char if char in _SPECIAL else char for char in home)
    prefix = prefix + "/" if prefix else ""
    out = []
    for glob in globs:
        while glob.startswith(("./", "/")):
            glob = glob[2:] if glob.startswith("./") else glob[1:]
        out.append(prefix + glob)
    return tuple(out)


def expand_braces(glob: str, limit: int = MAX_PATTERNS) -> list[str] | None:
    """The patterns ``glob``'s braces stand for (an unbalanced brace is literal), or None
    past ``limit``."""
    open_at = _first_group(glob)
    if open_at is None:
        return [glob]
    start, end, options = open_at
    done: list[str] = []
    for option in options:
        more = expand_braces(glob[:start] + option + glob[end + 1 :], limit - len(done))
        if more is None or len(done) + len(more) > limit:
            return None
        done.extend(more)
    return done


def _first_group(glob: str) -> tuple[int, int, list[str]] | None:
    """(index of ``{``, index of its ``}``, its comma-separated options) of the first
    balanced group holding a comma, or None."""
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth, options, part = 0, [], index + 1
            for end in range(index, len(glob)):
                if glob[end] == "{":
                    depth += 1
                elif glob[end] == "}":
                    depth -= 1
                    if depth == 0:
                        options.append(glob[part:end])
                        if len(options) > 1:
                            return index, end, options
                        break
                elif glob[end] == "," and depth == 1:
                    options.append(glob[part:end])
                    part = end + 1
        index += 1
    return None


def glob_problems(globs: Sequence[str]) -> list[str]:
    """Why some of a rule's globs will never match (over the bound, or no pattern)."""
    problems: list[str] = []
    total = 0
    for glob in globs:
        patterns = expand_braces(glob, MAX_PATTERNS - total)
        if patterns is None:
            return [
                *problems,
                f"glob {glob!r}: its braces expand past {MAX_PATTERNS} patterns; the rule's "
                "globs match nothing",
            ]
        total += len(patterns)
        if all(matches_nothing(compile_wildmatch(p.encode(), pathname=True)) for p in patterns):
            problems.append(f"glob {glob!r} is invalid (it can match nothing)")
    return problems


def matching(globs: Sequence[str], targets: Iterable[str]) -> tuple[str, str] | None:
    """The first (glob, target) where one of ``globs`` matches one of ``targets``
    (workspace-relative, ``"."`` for the root), or None; a rule expanding past the bound
    matches nothing."""
    compiled: list[tuple[str, list[Matcher]]] = []
    total = 0
    for glob in globs:
        patterns = expand_braces(glob, MAX_PATTERNS - total)
        if patterns is None:
            return None
        total += len(patterns)
        compiled.append((glob, [compile_wildmatch(p.encode(), pathname=True) for p in patterns]))
    for target in targets:
        text = target.encode()
        for glob, matchers in compiled:
            if any(match(text) for match in matchers):
                return glob, target
    return None
