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
first in ``skills_dirs``, then the first path; the loser is named in a warning and in
``shadowed`` (a build records it as not rendered, reason ``shadowed``, by the winner). Activation
reads nothing: the body and the resource list were taken when the catalog was discovered,
so an activation always matches the catalog it came from.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from harness.errors import ArgumentError
from harness.instruction_files._models import PassedRule
from harness.instruction_files._settings import InstructionFilesSettings
from harness.skills._cache import RootState, SkillCache, affected
from harness.skills._errors import SkillError, UnknownSkill
from harness.skills._frontmatter import Note, parse_skill
from harness.skills._model import Scope, Skill, SkillActivation, Trigger
from harness.skills._scan import FoundSkill, SkillScan
from harness.skills._settings import DEFAULT_SKILLS_DIRS
from harness.workspace import decode, display_path, printable, resolve_workspace
from harness.workspace._stoppable import run_stoppable
from harness.workspace._targets import resolve_scope
from harness.workspace.deny import DEFAULT_DENY_READ, DenyRules

if TYPE_CHECKING:
    from harness._tokenizer import Tokenizer


class SkillsConfig(Protocol):
    """What discovery reads of a configuration (``HarnessConfig`` has it all)."""

    @property
    def skills_dirs(self) -> tuple[str, ...]: ...
    @property
    def user_skills_dirs(self) -> tuple[str, ...]: ...
    @property
    def instruction_files(self) -> InstructionFilesSettings: ...
    @property
    def deny_read(self) -> tuple[str, ...]: ...


__all__ = ["RULE_FORMATS", "SkillCatalog"]

_T = TypeVar("_T")

_TRIGGERS = ("user", "model", "path")


@dataclass(frozen=True, slots=True, repr=False)
class SkillCatalog:
    """The skills found, in rendering order (user skills, then project ones, each by name),
    and every warning of their discovery."""

    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()
    shadowed: tuple[tuple[str, str], ...] = ()  # (loser's SKILL.md, the winner's), by path
    # What is derived from the catalog (its digest, its layer's entry units), computed once:
    # a session renders one catalog into many builds.
    _derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False)

    def derived(self, key: str, build: Callable[[], _T]) -> _T:
        """``build()``, computed once per catalog for ``key`` (the catalog is immutable)."""
        try:
            found: _T = self._derived[key]
        except KeyError:
            found = self._derived[key] = build()
        return found

    def __repr__(self) -> str:
        # Short: asyncio formats the repr of a main task's result on the way out of
        # asyncio.run, and a field-by-field repr of a large catalog costs milliseconds.
        names = ", ".join(skill.name for skill in self.skills[:5])
        more = f", ... ({len(self.skills)} skills)" if len(self.skills) > 5 else ""
        return f"<SkillCatalog [{names}{more}], {len(self.warnings)} warning(s)>"

    @property
    def digest(self) -> str:
        """sha256 of the catalog's entries (scope, name, description, location, SKILL.md
        sha256) in rendering order: equal catalogs, equal digests."""
        return self.derived("digest", self._digest)

    def _digest(self) -> str:
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
            from harness._tokenizer import ApproximateTokenizer

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
            kind=skill.kind,
        )

    def with_rules(self, rules: Iterable[PassedRule]) -> SkillCatalog:
        """This catalog with the rule files only judgement or a person activates (the
        ``passed`` rules of an ``InstructionSet`` whose reason is ``description only`` or
        ``manual``; rules excluded for this agent stay out) as entries of kind ``rule``,
        named by their path, activatable like a skill."""
        added = [_rule_entry(rule) for rule in rules if rule.reason.startswith(_CATALOG_RULES)]
        if not added:
            return self
        taken = {skill.name for skill in self.skills}
        skills = [*self.skills, *(entry for entry in added if entry.name not in taken)]
        skills.sort(key=lambda skill: (0 if skill.scope == "user" else 1, skill.name))
        return SkillCatalog(tuple(skills), self.warnings, self.shadowed)

    def excluded(self) -> list[dict[str, str]]:
        """Each shadowed skill as a build records a unit not rendered (``by``: the winner)."""
        return [
            {"layer": "skills", "id": loser, "reason": "shadowed", "by": winner}
            for loser, winner in self.shadowed
        ]

    @classmethod
    async def discover(
        cls,
        workspace: str | os.PathLike[str],
        *,
        targets: Sequence[str | os.PathLike[str]] = (),
        config: SkillsConfig | None = None,
        strict: bool = False,
        cache: SkillCache | None = None,
    ) -> SkillCatalog:
        """The catalog of ``workspace`` for ``targets`` (see the module docstring). With
        ``strict`` every departure from the Agent Skills specification raises
        ``SkillError`` listing them all. With ``cache`` (a ``SkillCache``) what was scanned
        before is reused, except what ``cache.invalidate(path)`` said changed."""
        root = resolve_workspace(workspace)
        directories: tuple[str, ...] = ("",)
        scope_warnings: tuple[tuple[str, str], ...] = ()
        if isinstance(targets, str | os.PathLike):
            targets = (targets,)
        settings = _Settings.of(config) if config is not None else _Settings.default()
        if targets:
            given = _absolute(workspace)
            deny = DenyRules(settings.deny_read)
            scope = await resolve_scope(
                root, targets, prune=_prune(config), workspace=given, deny=deny
            )
            directories, scope_warnings = scope.directories, scope.warnings
        job = _Job(root, directories, settings, strict, scope_warnings, cache)
        return await run_stoppable(job.run)


_CATALOG_RULES = ("description only", "manual")
RULE_FORMATS = frozenset({"cursor", "windsurf", "copilot"})
"""The rule formats that have rules only judgement or a person activates."""


def _rule_entry(rule: PassedRule) -> Skill:
    return Skill(
        name=rule.path,
        description=rule.description,
        path=rule.path,
        scope="project",
        digest=rule.digest,
        body=rule.body,
        kind="rule",
        format=rule.format,
        activation=rule.reason,
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
    deny_read: tuple[str, ...] = DEFAULT_DENY_READ

    @classmethod
    def default(cls) -> _Settings:
        files = InstructionFilesSettings()
        return cls(DEFAULT_SKILLS_DIRS, (), tuple(files.vendored), files.max_bytes)

    def scan(self, root: str, stop: threading.Event, deny: DenyRules) -> SkillScan:
        """A scan of ``root`` under these settings (a context manager)."""
        return SkillScan(root, prune=self.prune, max_bytes=self.max_bytes, stop=stop, deny=deny)

    @classmethod
    def of(cls, config: SkillsConfig) -> _Settings:
        files = config.instruction_files
        return cls(
            tuple(config.skills_dirs),
            tuple(config.user_skills_dirs),
            tuple(files.vendored),
            files.max_bytes,
            tuple(config.deny_read),
        )


@dataclass(slots=True)
class _Candidate:
    skill: Skill
    depth: int
    order: int


class _Collected:
    """What one discovery gathers: candidates, warnings, strict problems. ``parsed``: the
    frontmatter parsed before, by path and bytes (a cache's); ``used``: what this used."""

    def __init__(self, strict: bool, parsed: dict[tuple[str, bytes], Any] | None = None) -> None:
        self.strict = strict
        self.keep = parsed is not None  # without a cache, nothing parsed is kept
        self.parsed = parsed if parsed is not None else {}
        self.used: dict[tuple[str, bytes], Any] = {}
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
        key = (shown, found.data)
        known = self.parsed.get(key) if self.keep else None
        if known is None:
            text, alterations = decode(found.data)
            dir_name = found.rel.rsplit("/", 2)[-2] if "/" in found.rel else ""
            known = (alterations, *parse_skill(text, dir_name))
        if self.keep:
            self.used[key] = known
        alterations, parsed, notes = known
        for alteration in alterations:
            self.note(shown, alteration)
        if notes:
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
            resources=_shown_resources(shown, found.rel, found.resources),
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


def _shown_resources(shown: str, rel: str, resources: list[str]) -> tuple[str, ...]:
    """A skill's resources, sorted, as its ``path`` is shown (``user:`` prefix kept)."""
    base = shown[: len(shown) - len(rel)] if shown.endswith(rel) else ""
    return tuple([base + display_path(path) for path in sorted(resources)])


@dataclass(frozen=True, slots=True)
class _Job:
    """One discovery: what to scan, how, and the cache to reuse (if any)."""

    root: str
    directories: tuple[str, ...]
    settings: _Settings
    strict: bool
    scope_warnings: tuple[tuple[str, str], ...]
    cache: SkillCache | None

    def run(self, stop: threading.Event) -> SkillCatalog:
        cache = self.cache
        if cache is None:
            return self._discover(stop, None)
        key = (self.root, self.settings, self.directories, self.scope_warnings, self.strict)
        known = cache.catalog(key)
        if isinstance(known, SkillCatalog):
            return known
        generation = cache.generation
        catalog = self._discover(stop, cache)
        cache.keep_catalog(key, catalog, generation)
        return catalog

    def _discover(self, stop: threading.Event, cache: SkillCache | None) -> SkillCatalog:
        settings = self.settings
        state = cache.state(self.root, settings) if cache is not None else None
        collected = _Collected(self.strict, state.parsed if state is not None else None)
        collected.warnings.extend(self.scope_warnings)
        deny = DenyRules(settings.deny_read)
        keys = [
            (f"{directory}/{skills_dir}" if directory else skills_dir, order)
            for directory in self.directories
            for order, skills_dir in enumerate(settings.dirs)
        ]
        with _locked(state), settings.scan(self.root, stop, deny) as scan:
            _scan_keys(scan, keys, cache, state)
            collected.warnings.extend(scan.warnings)
            for found in scan.found:
                collected.add(found, display_path(found.rel), "project", found.rel.count("/"))
        for order, user_dir in enumerate(settings.user_dirs):
            _scan_user(user_dir, order, settings, stop, collected, deny, cache)
        if state is not None:
            state.parsed = collected.used  # what this discovery saw; older bytes are forgotten
        if collected.problems:
            raise SkillError(collected.problems)
        skills, shadowed = _resolve(collected)
        warnings = sorted(collected.warnings, key=lambda warning: warning[0])
        return SkillCatalog(
            skills=skills,
            warnings=tuple(f"{display_path(path)}: {printable(text)}" for path, text in warnings),
            shadowed=shadowed,
        )


def _locked(state: RootState | None) -> AbstractContextManager[object]:
    """One scan of a root at a time (the cache's scans are taken and stored under it)."""
    return state.scan_lock if state is not None else nullcontext()


def _scan_keys(
    scan: SkillScan,
    keys: list[tuple[str, int]],
    cache: SkillCache | None,
    state: RootState | None,
) -> None:
    """Scan each skills directory of ``keys``; with a cache, only what changed since."""
    for rel, order in keys:
        if cache is None or state is None:
            scan.scan(rel, order=order, keep=False)
            continue
        previous, dirt = cache.take(state, (rel, order))
        change = affected(rel, dirt) if previous is not None else None
        try:
            if previous is not None and change == frozenset():  # unchanged: as scanned
                scan.found.extend(previous.found)
                scan.warnings.extend(previous.warnings)
                result = previous
            else:
                reuse = previous if change else None
                result = scan.scan(rel, order=order, reuse=reuse, dirty=change or frozenset())
        except BaseException:
            cache.give_back(state, (rel, order), dirt)
            raise
        cache.store(state, (rel, order), result)


def _scan_user(
    user_dir: str,
    order: int,
    settings: _Settings,
    stop: threading.Event,
    collected: _Collected,
    deny: DenyRules,
    cache: SkillCache | None,
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
    state = cache.state(root, settings) if cache is not None else None
    with _locked(state), settings.scan(root, stop, deny) as scan:
        _scan_keys(scan, [("", order)], cache, state)
        for rel, text in scan.warnings:
            collected.note(f"{shown_dir}/{rel}" if rel else shown_dir, text)
        for found in scan.found:
            shown = f"{shown_dir}/{display_path(found.rel)}"
            collected.add(found, shown, "user", found.rel.count("/"))


def _resolve(collected: _Collected) -> tuple[tuple[Skill, ...], tuple[tuple[str, str], ...]]:
    """One skill per name (see the module docstring), and each loser with its winner (sorted
    by the loser's path), warning about each loser."""
    by_name: dict[str, list[_Candidate]] = {}
    for candidate in collected.candidates:
        by_name.setdefault(candidate.skill.name, []).append(candidate)
    winners: list[Skill] = []
    shadowed: list[tuple[str, str]] = []
    for name, group in by_name.items():
        if len(group) > 1:
            group.sort(key=_precedence)
        winner = group[0].skill
        winners.append(winner)
        for loser in group[1:]:
            shadowed.append((loser.skill.path, winner.path))
            collected.warnings.append(
                (
                    loser.skill.path,
                    f"skill {name!r} shadowed by {winner.path} ({_why(winner, loser)})",
                )
            )
    scope_rank: dict[Literal["user", "project"], int] = {"user": 0, "project": 1}
    winners.sort(key=lambda skill: (scope_rank[skill.scope], skill.name))
    return tuple(winners), tuple(sorted(shadowed))


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
