"""The harness as a whole: one object an engine holds, to build an agent's prompt.

::

    import anyio
    from harness import Harness

    async def main() -> None:
        async with Harness(database="examples/acme.db") as h:   # or store=<InstructionStore>
            prompt = await h.build_prompt("examples/acme", agent="reviewer", project_id="acme")
            print(prompt.tokens, prompt.digest)                 # hand prompt.text to the model

    anyio.run(main)

Outside ``async with`` there is no supervision tree and no cache, so ``build`` and
``build_prompt`` refuse (``HarnessNotRunning``) instead of answering uncached.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self, Unpack

import anyio
import anyio.to_thread

from harness._agents import Roster
from harness._project_context import ProjectContext, load_project_context
from harness._tokenizer import ApproximateTokenizer, parse_tokenizer_spec
from harness.build import (
    BUILD_DEFAULTS,
    BuildOptions,
    LayerInput,
    PromptBuild,
    check_options,
    emptied_by_budget,
    five_layers,
    normalised_units,
    unit_imports,
)
from harness.config import HarnessConfig, load_config, make_tokenizer
from harness.context_requests import NotReady
from harness.context_requests._build import prepare
from harness.context_requests._policy import (
    REQUIRED_POLICY_MISSING,
    missing_policies,
    unrendered_rules,
)
from harness.errors import ConfigError, StateError
from harness.instruction_files import InstructionFiles
from harness.instruction_files._explain import RulesExplanation
from harness.instruction_files.stores import InstructionStore
from harness.prompt_assembler import AssembledPrompt, AssemblyCache, Unit, assemble, merge_budgets
from harness.prompt_assembler._allocation import Allocation, check_allocation
from harness.prompt_assembler._budgets import PER_CALL_HINT
from harness.runtime import ChildSpec, Supervisor
from harness.skills._cache import SkillCache
from harness.skills._catalog import RULE_FORMATS, SkillCatalog
from harness.skills._units import skill_drops, skills_layer, skills_record
from harness.tools._units import as_checks, tools_layer, tools_record
from harness.workspace._stoppable import run_stoppable

if TYPE_CHECKING:
    from harness._tokenizer import Tokenizer
    from harness.manifests._provenance import Provenance
    from harness.manifests._store import ManifestStore
    from harness.tools._check import CatalogCheck

__all__ = ["BuildOptions", "Harness", "HarnessNotRunning", "LayerInput", "PromptBuild"]

_NOT_RUNNING = (
    "the harness is not running: use `async with Harness(...) as h:` and call "
    "h.build_prompt(...) inside the block"
)


class HarnessNotRunning(StateError):
    """``build_prompt`` / ``build`` on a ``Harness`` that is not entered, or has been left."""


class Harness:
    """``async with Harness(config, database=...) as h: await h.build_prompt(...)``.

    ``config`` defaults to ``load_config()`` (so ``$HARNESS_CONFIG`` applies). The agents'
    rows come from ``store`` (an ``InstructionStore``), or from ``database`` (a SQLite path or
    a ``postgresql://`` URL: the store is opened here and closed when the ``async with``
    ends); give one or neither. ``children`` are extra ``ChildSpec``s for the tree, started
    after the built-in ones. The roster is read once, here, so an unreadable roster fails at
    construction rather than on the first prompt; so does a configured ``tiktoken:`` rank file
    that does not exist (it is loaded on first use).

    ``manifests`` is the SQLite file every build is recorded in (docs/provenance.md): created
    on entry if missing, and ``build_prompt`` then returns only recorded prompts.

    The supervision tree, in start order (see ``child_specs``): the instruction-files cache,
    the store's companions (``store.child_specs(...)``), the manifest recorder when
    ``manifests`` is given, then ``children``. A later part
    that needs a supervised task appends its spec in ``child_specs``; nothing else changes.

    ``watch_store=False`` leaves the store's companions out (no PostgreSQL LISTEN connection):
    for one-shot use (the command line, ``harness.debug``), where nothing is cached long
    enough to need change notices. Without them a server store's rows are never cached, so
    every load reads the database: correct, only not cached.
    """

    def __init__(
        self,
        config: HarnessConfig | None = None,
        *,
        database: str | os.PathLike[str] | None = None,
        store: InstructionStore | None = None,
        children: Sequence[ChildSpec] = (),
        manifests: str | os.PathLike[str] | None = None,
        watch_store: bool = True,
    ) -> None:
        self.config = config if config is not None else load_config()
        self._provenance: Provenance | None = None
        if manifests is not None:  # imported only when used: a plain build never pays for it
            from harness.manifests._provenance import Provenance

            self._provenance = Provenance(manifests)
        self.roster: Roster = self.config.roster()
        _check_tokenizer_file(self.config.tokenizer)
        # database= is opened (and later closed) by InstructionFiles; store= stays the caller's.
        files_settings = self.config.instruction_files  # the formats are a top-level key
        config = self.config
        top = {
            "formats": config.formats,
            "copilot_agent": config.copilot_agent,
            "project_root_markers": config.project_root_markers,
            "deny_read": config.deny_read,
        }
        if any(getattr(files_settings, key) != value for key, value in top.items()):
            files_settings = files_settings.model_copy(update=top)
        self._instruction_files = InstructionFiles(files_settings, database=database, store=store)
        self._store = self._instruction_files.store
        # The SQLite file (absolute: a later chdir does not move it), else the store's name.
        self.database: Path | str | None = self._instruction_files.database or (
            self._store.name if self._store is not None else None
        )
        self._children = tuple(children)
        self._watch_store = watch_store
        self._supervisor: Supervisor | None = None
        self._stack: AsyncExitStack | None = None
        self._tokenizers: dict[str, Tokenizer] = {}
        self._assembly_cache = AssemblyCache()  # this Harness's memos; emptied when it is left
        self._skill_cache = SkillCache()  # skills scans kept between calls (invalidate(path))

    @property
    def instruction_files(self) -> InstructionFiles:
        """The instruction-files service: ``await load(...)`` and plain ``invalidate(...)``."""
        return self._instruction_files

    @property
    def store(self) -> InstructionStore | None:
        """Where the agents' rows come from (``None``: no database configured)."""
        return self._store

    @property
    def manifests(self) -> ManifestStore | None:
        """The manifest store every build is recorded in (``None`` without ``manifests=``);
        open inside ``async with`` only."""
        return self._provenance.store if self._provenance is not None else None

    @property
    def supervisor(self) -> Supervisor:
        """The supervision tree (for introspection); only inside ``async with``."""
        if self._supervisor is None:
            raise HarnessNotRunning(_NOT_RUNNING)
        return self._supervisor

    def child_specs(self) -> list[ChildSpec]:
        """The children of the tree, in start order (stopped in reverse).

        THE place to add a supervised part: the cache comes first (loads answer uncached
        until it is up), then what the store needs (a PostgreSQL listener), then the
        ``children`` given to the constructor. Append a new built-in child here.
        """
        files = self._instruction_files
        specs = [files.child_spec()]
        if self._store is not None and self._watch_store:
            specs.extend(self._store.child_specs(files))
        if self._provenance is not None:  # the recorder: stopped (drained) after the children
            specs.append(self._provenance.child_spec())
        specs.extend(self._children)
        return specs

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise StateError("this Harness is already running; it cannot be entered twice")
        stack = AsyncExitStack()
        self._stack = stack  # claimed before the first await: a concurrent enter sees it
        intensity = self.config.supervisor
        try:
            # Closed last, after the tree; only a store opened from database= is closed.
            stack.push_async_callback(self._instruction_files.aclose)
            if self._provenance is not None:  # open before the tree, closed after it
                await self._provenance.open()
                stack.push_async_callback(self._provenance.aclose)
            supervisor = Supervisor(
                self.child_specs(),
                strategy="one_for_one",
                max_restarts=intensity.max_restarts,
                max_seconds=intensity.max_seconds,
            )
            await stack.enter_async_context(supervisor)
        except BaseException:
            self._stack = None
            await stack.aclose()
            raise
        self._supervisor = supervisor
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        stack, self._stack, self._supervisor = self._stack, None, None
        if stack is None:
            return None
        try:
            return await stack.__aexit__(exc_type, exc, tb)
        finally:
            self._assembly_cache.clear()  # no prompt text outlives the running Harness

    def tokenizer(self, spec: Tokenizer | str | None = None) -> Tokenizer:
        """The tokenizer for a spec (default: the config's), built once per spec and reused."""
        if spec is not None and not isinstance(spec, str):
            return spec
        name = spec if spec is not None else self.config.tokenizer
        if name not in self._tokenizers:
            self._tokenizers[name] = make_tokenizer(name)
        return self._tokenizers[name]

    def effective_budgets(self, budgets: Mapping[str, int] | None = None) -> dict[str, int]:
        """Config budgets with per-call ``budgets`` merged over them, checked by the same rule
        as a config file's: bad names or values, or a total over the input envelope, raise
        ``BudgetError`` (a ``ValueError``)."""
        config = self.config
        return merge_budgets(
            budgets,
            config.layout_budgets(),
            layout=config.layout,
            envelope=config.envelope,
            hint=PER_CALL_HINT,
        )

    async def skills(
        self,
        workspace: str | os.PathLike[str],
        *,
        targets: Sequence[str | os.PathLike[str]] = (),
        strict: bool = False,
    ) -> SkillCatalog:
        """The skills of ``workspace`` (and of the targets' chains) under this config; what
        was scanned before is reused, except what ``invalidate(path)`` said changed."""
        catalog = await SkillCatalog.discover(
            workspace, targets=targets, config=self.config, strict=strict, cache=self._skill_cache
        )
        if RULE_FORMATS.intersection(self.config.formats):  # manual rules: catalog entries
            rules = await self._instruction_files.load(workspace, agent="skills", targets=targets)
            catalog = catalog.with_rules(rules.passed)
        return catalog

    def invalidate(self, path: str | os.PathLike[str] | None = None) -> None:
        """``path`` changed (a file or directory a watcher reports; None: everything): the
        next loads re-read what it can change, instruction files and skills alike. Plain
        synchronous call, safe from any thread."""
        self._instruction_files.invalidate(path)
        self._skill_cache.invalidate(path)

    async def project_context(self, workspace: str | os.PathLike[str]) -> ProjectContext:
        """The workspace's ``.AGENTS/`` units, read off the event loop under the config's rules."""
        config = self.config
        return await run_stoppable(  # cancelled: not waited for, and it stops soon after
            lambda stop: load_project_context(
                workspace,
                max_file_bytes=config.project_context.max_file_bytes,
                vendored=config.instruction_files.vendored,
                deny_read=config.deny_read,
                stop=stop,
            )
        )

    async def _resolved_tokenizer(self, spec: Tokenizer | str) -> Tokenizer:
        """The tokenizer a spec names, built once per spec (off the loop: loading a rank file
        takes a while)."""
        chosen = self._tokenizers.get(spec) if isinstance(spec, str) else spec
        if chosen is None:
            chosen = await anyio.to_thread.run_sync(self.tokenizer, spec)
        return chosen

    async def _assemble(
        self,
        layers: Mapping[str, str | Unit | Sequence[Unit]],
        budgets: Mapping[str, int],
        tokenizer: Tokenizer,
        now: datetime,
        allocation: Allocation = "fixed",
    ) -> AssembledPrompt:
        call = functools.partial(
            assemble,
            layers,
            layout=self.config.layout,
            budgets=budgets,
            strategies=self.config.layout_strategies(),
            tokenizer=tokenizer,
            now=now,
            cache=self._assembly_cache,
            allocation=allocation,
        )
        # bytes/4 costs a length per unit; an exact tokenizer encodes whole layers, which can
        # take a noticeable time on large workspaces: then keep the event loop free.
        if type(tokenizer) is ApproximateTokenizer:
            return call()
        return await anyio.to_thread.run_sync(call)

    async def build(
        self, workspace: str | os.PathLike[str], *, agent: str, **options: Unpack[BuildOptions]
    ) -> PromptBuild:
        """Like ``build_prompt`` but also returns the discovery report the debug print shows
        (``targets``, ``chain`` and ``imports`` among it)."""
        check_options(options, BuildOptions.__optional_keys__, "build")
        if self._supervisor is None:
            raise HarnessNotRunning(_NOT_RUNNING)
        given: BuildOptions = {**BUILD_DEFAULTS, **options}
        project_id, targets = given["project_id"], given["targets"]
        identity = self.roster.identity(agent)  # UnknownAgent first: the cheapest check
        now = datetime.now(UTC)  # the build's clock: freshness of max_age units is judged at it
        merged = self.effective_budgets(given["budgets"])
        # Resolved once per build; the instruction files and .AGENTS/ read this one path.
        resolved = self._instruction_files.resolve(workspace)
        root = Path(resolved.path)
        tokenizer = given["tokenizer"]
        spec = tokenizer if tokenizer is not None else self.config.tokenizer
        chosen = await self._resolved_tokenizer(spec)
        rules = normalised_units("business_rules", given["business_rules"])
        state = normalised_units("task_state", given["task_state"])
        instruction_set = await self._instruction_files.load_resolved(
            resolved, agent=agent, project_id=project_id, targets=targets
        )
        project_context = await self.project_context(root)
        layers = five_layers(
            Unit(id=agent, text=identity), instruction_set, project_context, rules, state
        )
        tools = given["tools"]
        checks = as_checks(tools) if tools else ()
        if checks:  # a layout without the tools layer refuses them
            layers["tools"] = tools_layer(checks, tuple(spec.name for spec in self.config.layout))
        catalog, activations = given["skills"], given["activations"]
        skills = None
        if catalog is not None or activations:  # a layout without the skills layer refuses them
            names = tuple(spec.name for spec in self.config.layout)
            layers["skills"] = skills_layer(catalog, activations, names)
            skills = skills_record(catalog, activations)
        plan = prepare(layers, self.config.layout, given["request"], given["evidence"], now)
        if given["require_ready"] and plan.readiness is not None and not plan.readiness.ready:
            raise NotReady(plan.readiness)
        allocation = check_allocation(given["allocation"])
        prompt = await self._assemble(plan.layers, merged, chosen, now, allocation)
        missing, policy_warnings = missing_policies(prompt, instruction_set.targets, chosen.count)
        unread = unrendered_rules(instruction_set.unmatched, instruction_set.shadowed)
        unread += catalog.excluded() if catalog is not None else []  # its shadowed skills
        record = plan.record({REQUIRED_POLICY_MISSING: missing} if missing else None, unread)
        if record is not None:  # readiness and what was screened out, in the manifest
            prompt = dataclasses.replace(prompt, _request=record)
        warnings = [*instruction_set.warnings, *project_context.warnings]
        warnings.extend(emptied_by_budget(prompt))
        warnings.extend(skill_drops(prompt))
        warnings.extend(policy_warnings)
        readiness = plan.readiness
        if self._provenance is not None:  # durable before the prompt is handed out, or no prompt
            from harness.manifests._provenance import BuildFacts  # loaded with the store

            imports = unit_imports(instruction_set, project_context)
            sections = _sections(checks, skills)
            about = BuildFacts(root, agent, project_id, instruction_set.targets, imports, sections)
            # What the rest of the build does not read is let go before it waits for its
            # commit: 64 waiting builds' objects are what the garbage collector goes through.
            del layers, plan, record, rules, state, resolved, unread, imports, sections
            prompt = await self._provenance.recorded(prompt, now, spec, about)
        return PromptBuild(
            prompt=prompt,
            workspace=root,
            agent=agent,
            project_id=project_id,
            instruction_set=instruction_set,
            project_context=project_context,
            envelope=self.config.envelope,
            budgets=merged,
            tokenizer_name=chosen.name,
            warnings=tuple(warnings),
            tools=checks,
            skills=skills,
            readiness=readiness,
        )

    async def rules_for(
        self, workspace: str | os.PathLike[str], *, targets: Sequence[str | os.PathLike[str]] = ()
    ) -> RulesExplanation:
        """Every candidate rule file of the configured formats for ``targets``, each with
        ``applied`` and a one-line reason (``InstructionFiles.rules_for``): the dry run of
        what a build for those targets would read."""
        if self._supervisor is None:
            raise HarnessNotRunning(_NOT_RUNNING)
        return await self._instruction_files.rules_for(workspace, targets=targets)

    async def build_prompt(
        self, workspace: str | os.PathLike[str], *, agent: str, **options: Unpack[BuildOptions]
    ) -> AssembledPrompt:
        """Assemble the five-layer prompt for ``agent`` working in ``workspace``.

        Instruction files are units in ascending precedence (root first, the database row
        last), so a tight budget discards the least authoritative first. ``targets``: the
        paths the run will touch; only the instruction files on their chains from the root
        apply (``TargetOutsideWorkspace`` for one outside the workspace). ``budgets`` merge
        over the config's; ``tokenizer`` is a ``Tokenizer`` or a spec such as
        ``"tiktoken:cl100k_base"``. Raises ``UnknownAgent`` for a slug not in the roster and
        ``WorkspaceNotFoundError`` (a ``FileNotFoundError``) for a bad workspace; outside
        ``async with`` (not entered, or already left) it raises ``HarnessNotRunning`` (a
        ``HarnessError`` and a ``RuntimeError``). With ``manifests=`` it returns only once the
        build is durably recorded (``prompt.manifest_id``), and raises ``ManifestStoreError``
        (no prompt) when it cannot be. ``tools``: a ``CatalogCheck`` per MCP server; only
        their allowed tools are rendered, in the ``tools`` layer (``harness.tools``).
        ``skills`` / ``activations``: a ``SkillCatalog`` (``h.skills(...)``) and what
        ``catalog.activate`` returned, in the ``skills`` layer (``harness.skills``).
        ``request`` (a ``ContextRequest``) and ``evidence`` (units for the ``evidence`` layer):
        readiness is judged before assembly and recorded in the manifest; units the
        request's principal may not see are removed before anything reads their text;
        ``require_ready=True`` raises ``NotReady`` instead of returning an unready prompt.
        """
        check_options(options, BuildOptions.__optional_keys__, "build_prompt")
        build = await self.build(workspace, agent=agent, **options)
        return build.prompt


def _sections(
    checks: Sequence[CatalogCheck], skills: Mapping[str, object] | None
) -> dict[str, object] | None:
    """The manifest's further parts: the tool catalogs' record and the skills' record."""
    sections: dict[str, object] = {}
    if checks:
        sections["tools"] = tools_record(checks)
    if skills is not None:  # catalog digest and entries, each activation
        sections["skills"] = dict(skills)
    return sections or None


def _check_tokenizer_file(spec: str) -> None:
    file = parse_tokenizer_spec(spec).rank_file
    if file is not None and not file.is_file():
        raise ConfigError(
            f"tokenizer {spec!r}: no such rank file (a relative path in a config file is "
            "relative to that file)"
        )
