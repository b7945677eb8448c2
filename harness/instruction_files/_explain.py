"""Which rule files apply to some targets, and why: the dry run behind ``harness rules``.

    >>> import anyio, os, tempfile
    >>> from harness.instruction_files import InstructionFiles, InstructionFilesSettings
    >>> ws = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(ws, ".cursor", "rules"))
    >>> with open(os.path.join(ws, ".cursor", "rules", "ts.mdc"), "w") as out:
    ...     _ = out.write("---\\nglobs: src/**/*.ts\\n---\\nStrict mode.\\n")
    >>> files = InstructionFiles(InstructionFilesSettings(formats=("agents", "cursor")))
    >>> explanation = anyio.run(lambda: files.rules_for(ws, targets=["src/x.ts"]))
    >>> print(explanation)
    applied      .cursor/rules/ts.mdc  [cursor]  glob 'src/**/*.ts' matched src/x.ts

Like ``git check-ignore -v``: every candidate rule file of the configured formats on the
targets' chains, with ``applied`` and a one-line reason: ``always``; ``glob 'G' matched T``
or ``no glob matched`` for a path rule; the reason a read rule is not a source
(``description only: catalog``, ``excluded for agent coding-agent``, ``manual: ...``);
``shadowed by AGENTS.override.md``; ``ignored by .gitignore:3`` (the ignore file and line
of the deciding pattern, ``.git/info/exclude`` too); ``local file`` for an
``AGENTS.override.md`` or ``CLAUDE.local.md`` read although an ignore rule lists it; or why
a file was skipped (over the byte cap, unparseable frontmatter, ...). Sources come first,
in precedence order, then the rest by path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from harness.instruction_files._models import InstructionSet, InstructionSource
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._format import InstructionFormat
from harness.instruction_files.discovery._globs import matching

__all__ = ["RuleCandidate", "RulesExplanation", "explain"]

_SKIPPED = ": skipped: "


@dataclass(frozen=True, slots=True)
class RuleCandidate:
    """One candidate rule file: workspace-relative ``path``, its ``format``, whether it
    applies to the targets, and why (one line)."""

    path: str
    format: str
    applied: bool
    reason: str


@dataclass(frozen=True, slots=True)
class RulesExplanation:
    """Every candidate rule file for ``targets`` (iterating yields them), the ``chain`` of
    directories looked at, and the load's ``warnings``. ``str()`` is one line per rule."""

    targets: tuple[str, ...]
    chain: tuple[str, ...]
    rules: tuple[RuleCandidate, ...]
    warnings: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[RuleCandidate]:
        return iter(self.rules)

    @property
    def applied(self) -> tuple[RuleCandidate, ...]:
        return tuple(rule for rule in self.rules if rule.applied)

    def lines(self) -> list[str]:
        if not self.rules:
            return []
        width = max(len(rule.path) for rule in self.rules)
        return [
            f"{'applied' if rule.applied else 'not applied':<11}  {rule.path:<{width}}  "
            f"[{rule.format}]  {rule.reason}"
            for rule in self.rules
        ]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def explain(
    found: InstructionSet,
    root: str,
    settings: InstructionFilesSettings,
    formats: Sequence[InstructionFormat],
) -> RulesExplanation:
    """The explanation of a load's set ``found`` (every rule it read, path rules not yet
    filtered) for its targets, in the workspace whose real path is ``root``."""
    targets = found.targets
    local = frozenset(found.local)
    rules = [
        _verdict(source, targets, source.path in local)
        for source in found
        if source.format != "database"
    ]
    rest = [RuleCandidate(rule.path, rule.format, False, rule.reason) for rule in found.passed]
    rest += _shadowed(found, root, settings)
    rest += _skipped(found.warnings, formats)
    rest.sort(key=lambda rule: rule.path)
    return RulesExplanation(targets, found.chain, (*rules, *rest), found.warnings)


def _verdict(source: InstructionSource, targets: tuple[str, ...], local: bool) -> RuleCandidate:
    if source.trigger != "paths":
        return RuleCandidate(source.path, source.format, True, "local file" if local else "always")
    if not targets:
        reason = "no targets: a path rule applies only when a target matches its globs"
        return RuleCandidate(source.path, source.format, False, reason)
    hit = matching(source.globs, targets)
    if hit is None:
        return RuleCandidate(source.path, source.format, False, "no glob matched")
    glob, target = hit
    return RuleCandidate(source.path, source.format, True, f"glob {glob!r} matched {target}")


def _shadowed(
    found: InstructionSet, root: str, settings: InstructionFilesSettings
) -> list[RuleCandidate]:
    """The ``agents`` files a chosen one kept from being read (one file per directory)."""
    names = settings.names
    out = []
    for source in found:
        if source.format != "agents":
            continue
        directory, _, name = source.path.rpartition("/")
        if name not in names:
            continue
        for other in names[names.index(name) + 1 :]:
            rel = f"{directory}/{other}" if directory else other
            if os.path.lexists(os.path.join(root, rel)):
                out.append(RuleCandidate(rel, "agents", False, f"shadowed by {name}"))
    return out


def _skipped(warnings: Sequence[str], formats: Sequence[InstructionFormat]) -> list[RuleCandidate]:
    """Candidate files a warning says were skipped (ignored, too big, unparseable, ...)."""
    out = []
    for warning in warnings:
        path, found, reason = warning.partition(_SKIPPED)
        if not found:
            continue
        format = _format_of(path, formats)
        if format is None:
            continue
        out.append(RuleCandidate(path, format, False, reason.split("; it still shadows")[0]))
    return out


def _format_of(path: str, formats: Sequence[InstructionFormat]) -> str | None:
    name = path.rpartition("/")[2]
    for fmt in formats:
        if name in fmt.candidates() or fmt.home(path) is not None:
            return fmt.name
    return None
