"""``SkillCatalog``: the skills a workspace (and, when configured, the user) offers.

::

    from harness.skills import SkillCatalog

    catalog = await SkillCatalog.discover("/srv/acme", targets=["packages/parser/src/x.py"])
    for skill in catalog.skills:
        print(skill.name, skill.path)
    activation = await catalog.activate("pdf", reason="the user attached a PDF", trigger="user")

Discovery reads the skills directories (``skills_dirs``) of the workspace root and of every
directory on the targets' chains, then the configured ``user_skills_dirs``; everything it
skipped or altered is in ``warnings``. Two skills of one name: the project's wins over the
user's, then the deeper ``SKILL.md`` over the shallower, then the skills directory listed
first in ``skills_dirs``, then the first path; the loser is named in a warning. Activation
reads nothing: the body and the resource list were taken when the catalog was discovered,
so an activation always matches the catalog it came from.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from harness.errors import ArgumentError
from harness.instruction_files.settings import InstructionFilesSettings
from harness.skills.errors import SkillError, UnknownSkill
from harness.skills.frontmatter import Note, parse_skill
from harness.skills.model import Scope, Skill, SkillActivation, Trigger
from harness.skills.scan import FoundSkill, SkillScan
from harness.skills.settings import DEFAULT_SKILLS_DIRS
from harness.workspace import decode, display_path, printable, resolve_workspace
from harness.workspace.deny import DenyRules
from harness.workspace.stoppable import run_stoppable
from harness.workspace.targets import resolve_scope

if TYPE_CHECKING:
    from harness.tokenizer import Tokenizer


class SkillsConfig(Protocol):
    """What discovery reads of a configuration (``HarnessConfig`` has it all)."""

    @property
    def skills_dirs(self) -> tuple[str, ...]: ...
    @property
    def user_skills_dirs(self) -> tuple[str, ...]: ...
    @property
    def instruction_files(self) -> InstructionFilesSettings: ...


__all__ = ["SkillCatalog"]

_TRIGGERS = ("user", "model", "path")


@dataclass(frozen=True, slots=True)
class SkillCatalog:
    """The skills found, in rendering order (user skills, then project ones, each by name),
    and every warning of their discovery."""

    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """sha256 of the catalog's entries (scope, name, description, location, SKILL.md
        sha256) in rendering order: equal catalogs, equal digests."""
        entries = [
            {**skill.entry(), "scope": skill.scope, "sha256": skill.digest} for skill in self.skills
        ]
        text = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(skill.name for skill in self.skills))

    def get(self, name: str) -> Skill:
        """The skill named ``name``; ``UnknownSkill`` (a ``KeyError``) listing the names."""
        for skill in self.skills:
            if skill.name == name:
                return skill
        raise UnknownSkill(name, self.names)

    async def activate(
        self,
        name: str,
        *,
        reason: str,
        trigger: Trigger = "model",
        tokenizer: Tokenizer | None = None,
    ) -> SkillActivation:
        """The activation of skill ``name``: its body, digest, resources (listed, not read)
        and token count. ``reason`` says why (it is recorded); ``trigger``: who asked."""
        skill = self.get(name)
        if trigger not in _TRIGGERS:
            raise ArgumentError(f"trigger must be one of {', '.join(_TRIGGERS)}, got {trigger!r}")
        if not isinstance(reason, str) or not reason.strip():
            raise ArgumentError("activate() needs a reason: say why the skill is loaded")
        if tokenizer is None:
            from harness.tokenizer import ApproximateTokenizer

            tokenizer = ApproximateTokenizer()
        return SkillActivation(
            name=skill.name,
            body=skill.body,
            digest=hashlib.sha256(skill.body.encode()).hexdigest(),
            resources=skill.resources,
            tokens=tokenizer.count(skill.body),
            scope=skill.scope,
            path=skill.path,
            skill_digest=skill.digest,
            reason=reason,
            trigger=trigger,
        )

    @classmethod
    async def discover(
        cls,
        workspace: str | os.PathLike[str],
        *,
        targets: Sequence[str | os.PathLike[str]] = (),
        config: SkillsConfig | None = None,
        strict: bool = False,
    ) -> SkillCatalog:
        """The catalog of ``workspace`` for ``targets`` (see the module docstring). With
        ``strict`` every departure from the Agent Skills specification raises
        ``SkillError`` listing them all."""
        root = resolve_workspace(workspace)
        directories: tuple[str, ...] = ("",)
        scope_warnings: tuple[tuple[str, str], ...] = ()
        if isinstance(targets, str | os.PathLike):
            targets = (targets,)
        settings = _Settings.of(config) if config is not None else _Settings.default()
        if targets:
            given = _absolute(workspace)
            scope = await resolve_scope(
                root, targets, prune=_prune(config), workspace=given, deny=settings.deny
            )
            directories, scope_warnings = scope.directories, scope.warnings
        return await run_stoppable(
            lambda stop: _discover(root, directories, settings, strict, stop, scope_warnings)
        )


def _prune(config: SkillsConfig | None) -> tuple[str, ...]:
    files = config.instruction_files if config is not None else InstructionFilesSettings()
    return tuple(files.vendored)


def _absolute(workspace: str | os.PathLike[str]) -> str:
    """The workspace as given, made absolute (a string operation and a ``getcwd``)."""
    return os.path.abspath(os.fspath(workspace))


@dataclass(frozen=True, slots=True)
class _Settings:
    dirs: tuple[str, ...]
    user_dirs: tuple[str, ...]
    prune: tuple[str, ...]
    max_bytes: int
    deny: DenyRules | None = None  # deny_read: paths never opened

    @classmethod
    def default(cls) -> _Settings:
        files = InstructionFilesSettings()
        deny = DenyRules(files.deny_read)
        return cls(DEFAULT_SKILLS_DIRS, (), tuple(files.vendored), files.max_bytes, deny)

    @classmethod
    def of(cls, config: SkillsConfig) -> _Settings:
        files = config.instruction_files
        return cls(
            tuple(config.skills_dirs),
            tuple(config.user_skills_dirs),
            tuple(files.vendored),
            files.max_bytes,
            # a Harness config's top-level deny_read is the setting; else the files' own
            DenyRules(getattr(config, "deny_read", files.deny_read)),
        )


@dataclass(slots=True)
class _Candidate:
    skill: Skill
    depth: int
    order: int


class _Collected:
    """What one discovery gathers: candidates, warnings, strict problems."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.candidates: list[_Candidate] = []
        self.warnings: list[tuple[str, str]] = []
        self.problems: list[str] = []
        self.seen: dict[tuple[int, int], str] = {}

    def note(self, path: str, text: str) -> None:
        """A warning only: strict mode does not judge the walk (it judges the files)."""
        self.warnings.append((path, text))

    def add(self, found: FoundSkill, shown: str, scope: Scope, depth: int) -> None:
        first = self.seen.get(found.identity)
        if first is not None:
            self.note(
                shown,
                f"skipped: the same file as {first} (hard link or symlink); loaded once",
            )
            return
        self.seen[found.identity] = shown
        text, alterations = decode(found.data)
        for alteration in alterations:
            self.note(shown, alteration)
        dir_name = found.rel.rsplit("/", 2)[-2] if "/" in found.rel else ""
        parsed, notes = parse_skill(text, dir_name)
        self._notes(shown, notes, loaded=parsed is not None)
        if parsed is None:
            return
        skill = Skill(
            name=parsed.name,
            description=parsed.description,
            path=shown,
            scope=scope,
            digest=hashlib.sha256(found.data).hexdigest(),
            allowed_tools=parsed.allowed_tools,
            metadata=parsed.metadata,
            extra=parsed.extra,
            license=parsed.license,
            compatibility=parsed.compatibility,
            body=parsed.body,
            resources=tuple(
                _shown_resource(shown, found.rel, rel) for rel in sorted(found.resources)
            ),
        )
        self.candidates.append(_Candidate(skill, depth, found.order))

    def _notes(self, shown: str, notes: list[Note], *, loaded: bool) -> None:
        for note in notes:
            if note.level == "strict":
                if self.strict:
                    self.problems.append(f"{shown}: {printable(note.text)}")
                continue
            if self.strict:
                self.problems.append(f"{shown}: {printable(note.text)}")
            suffix = "" if loaded or note.level != "fatal" else "; the skill is skipped"
            self.warnings.append((shown, note.text + suffix))


def _shown_resource(shown: str, rel: str, resource: str) -> str:
    """A resource's path as the skill's ``path`` is shown (``user:`` prefix kept)."""
    base = shown[: len(shown) - len(rel)] if shown.endswith(rel) else ""
    return base + display_path(resource)


def _discover(
    root: str,
    directories: tuple[str, ...],
    settings: _Settings,
    strict: bool,
    stop: threading.Event,
    scope_warnings: tuple[tuple[str, str], ...],
) -> SkillCatalog:
    collected = _Collected(strict)
    collected.warnings.extend(scope_warnings)
    with SkillScan(
        root, prune=settings.prune, max_bytes=settings.max_bytes, stop=stop, deny=settings.deny
    ) as scan:
        for directory in directories:
            for order, skills_dir in enumerate(settings.dirs):
                scan.scan(f"{directory}/{skills_dir}" if directory else skills_dir, order=order)
        collected.warnings.extend(scan.warnings)
        for found in scan.found:
            collected.add(found, display_path(found.rel), "project", found.rel.count("/"))
    for order, user_dir in enumerate(settings.user_dirs):
        _scan_user(user_dir, order, settings, stop, collected)
    if collected.problems:
        raise SkillError(collected.problems)
    skills = _resolve(collected)
    warnings = sorted(collected.warnings, key=lambda warning: warning[0])
    return SkillCatalog(
        skills=skills,
        warnings=tuple(f"{display_path(path)}: {printable(text)}" for path, text in warnings),
    )


def _scan_user(
    user_dir: str, order: int, settings: _Settings, stop: threading.Event, collected: _Collected
) -> None:
    shown_dir = f"user:{user_dir.rstrip('/')}"
    if not os.path.isabs(user_dir):
        collected.note(shown_dir, "not read: user_skills_dirs entries must be absolute paths")
        return
    try:
        root = resolve_workspace(user_dir)
    except FileNotFoundError:
        collected.note(shown_dir, "not read: no such directory")
        return
    with SkillScan(
        root, prune=settings.prune, max_bytes=settings.max_bytes, stop=stop, deny=settings.deny
    ) as scan:
        scan.scan("", order=order)
        for rel, text in scan.warnings:
            collected.note(f"{shown_dir}/{rel}" if rel else shown_dir, text)
        for found in scan.found:
            shown = f"{shown_dir}/{display_path(found.rel)}"
            collected.add(found, shown, "user", found.rel.count("/"))


def _resolve(collected: _Collected) -> tuple[Skill, ...]:
    """One skill per name (see the module docstring), warning about each loser."""
    by_name: dict[str, list[_Candidate]] = {}
    for candidate in collected.candidates:
        by_name.setdefault(candidate.skill.name, []).append(candidate)
    winners: list[Skill] = []
    for name, group in by_name.items():
        group.sort(key=_precedence)
        winner = group[0].skill
        winners.append(winner)
        for loser in group[1:]:
            collected.warnings.append(
                (
                    loser.skill.path,
                    f"skill {name!r} shadowed by {winner.path} ({_why(winner, loser)})",
                )
            )
    scope_rank: dict[Literal["user", "project"], int] = {"user": 0, "project": 1}
    winners.sort(key=lambda skill: (scope_rank[skill.scope], skill.name))
    return tuple(winners)


def _precedence(candidate: _Candidate) -> tuple[int, int, int, str]:
    return (
        0 if candidate.skill.scope == "project" else 1,
        -candidate.depth,
        candidate.order,
        candidate.skill.path,
    )


def _why(winner: Skill, loser: _Candidate) -> str:
    if winner.scope != loser.skill.scope:
        return "a project skill wins over a user skill"
    return "the deeper or first-configured skills directory wins"
