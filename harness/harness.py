"""The harness as a whole: the supervised instruction-files cache plus ``build_prompt``.

``Harness`` is the one object an engine holds. Entering it starts a supervision tree whose
child is the instruction-files cache task; ``build_prompt`` then gathers the five layers
(identity from the roster, instruction files, ``.AGENTS/`` project context, and the caller's
business rules and task state) and hands them to the pure assembler. Gathering is I/O and
lives here; trimming is pure and lives in ``harness.prompt_assembler``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio
import anyio.to_thread

from harness.agents import Roster
from harness.config import ConfigError, Envelope, HarnessConfig, load_config, make_tokenizer
from harness.instruction_files import InstructionFiles, InstructionSet
from harness.instruction_files.discovery import resolve_workspace
from harness.project_context import ProjectContext, load_project_context
from harness.prompt_assembler import AssembledPrompt, Unit, assemble, merge_budgets
from harness.prompt_assembler.budgets import PER_CALL_HINT
from harness.runtime import Supervisor
from harness.tokenizer import ApproximateTokenizer, looks_like_path

if TYPE_CHECKING:
    from harness.tokenizer import Tokenizer

__all__ = ["Harness", "LayerInput", "PromptBuild"]

#: What a caller may pass for ``business_rules`` or ``task_state``: one string (one unit whose
#: id is the layer name), one ``Unit``, or a sequence of units and strings in discard order
#: (oldest first). A string in a sequence becomes a unit with id ``"<layer>:<n>"`` (1-based).
LayerInput = str | Unit | Sequence[Unit | str]


@dataclass(frozen=True, slots=True)
class PromptBuild:
    """An assembled prompt with everything needed to explain it (what ``debug`` prints).

    ``warnings`` holds every discovery warning (instruction files, then ``.AGENTS/``).
    ``slack`` is the envelope minus
    the budgets; ``headroom`` is the envelope minus the tokens the prompt actually uses.
    """

    prompt: AssembledPrompt
    workspace: Path
    agent: str
    project_id: str | None
    instruction_set: InstructionSet
    project_context: ProjectContext
    envelope: Envelope
    budgets: Mapping[str, int]
    tokenizer_name: str
    warnings: tuple[str, ...] = field(default=())

    @property
    def slack(self) -> int:
        return self.envelope.input_tokens - sum(self.budgets.values())

    @property
    def headroom(self) -> int:
        return self.envelope.input_tokens - self.prompt.tokens


def _units(layer: str, value: LayerInput) -> str | Unit | list[Unit]:
    """Normalise a caller-provided layer; strings inside a sequence get numbered ids."""
    if isinstance(value, str | Unit):
        return value
    units: list[Unit] = []
    for index, item in enumerate(value, start=1):
        if isinstance(item, Unit):
            units.append(item)
        elif isinstance(item, str):
            units.append(Unit(id=f"{layer}:{index}", text=item))
        else:
            raise TypeError(f"{layer}: expected str or Unit items, got {type(item).__name__}")
    return units


class Harness:
    """``async with Harness(config, database=...) as h: await h.build_prompt(...)``.

    ``config`` defaults to ``load_config()`` (so ``$HARNESS_CONFIG`` applies); ``database``
    is the SQLite file holding ``agent_instructions``. The roster is read once, here, so an
    unreadable roster fails at construction rather than on the first prompt; so does a
    configured ``tiktoken:`` rank file that does not exist (it is loaded on first use).
    """

    def __init__(
        self,
        config: HarnessConfig | None = None,
        *,
        database: str | os.PathLike[str] | None = None,
    ) -> None:
        self.config = config if config is not None else load_config()
        # Absolute now: a later chdir in the embedding process must not move the database.
        self.database = Path(database).absolute() if database is not None else None
        self.roster: Roster = self.config.roster()
        _check_tokenizer_file(self.config.tokenizer)
        self._instruction_files = InstructionFiles(
            self.config.instruction_files, database=self.database
        )
        self._supervisor: Supervisor | None = None
        self._stack: AsyncExitStack | None = None
        self._tokenizers: dict[str, Tokenizer] = {}

    @property
    def instruction_files(self) -> InstructionFiles:
        """The instruction-files service: ``await load(...)`` and plain ``invalidate(...)``."""
        return self._instruction_files

    @property
    def supervisor(self) -> Supervisor:
        """The supervision tree (for introspection); only inside ``async with``."""
        if self._supervisor is None:
            raise RuntimeError("the harness is not running: use `async with Harness(...) as h`")
        return self._supervisor

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError("this Harness is already running; it cannot be entered twice")
        stack = AsyncExitStack()
        self._stack = stack  # claimed before the first await: a concurrent enter sees it
        intensity = self.config.supervisor
        supervisor = Supervisor(
            [self._instruction_files.child_spec()],
            strategy="one_for_one",
            max_restarts=intensity.max_restarts,
            max_seconds=intensity.max_seconds,
        )
        try:
            await stack.enter_async_context(supervisor)
        except BaseException:
            self._stack = None
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
        return await stack.__aexit__(exc_type, exc, tb)

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
            budgets, config.budgets.as_mapping(), envelope=config.envelope, hint=PER_CALL_HINT
        )

    async def project_context(self, workspace: str | os.PathLike[str]) -> ProjectContext:
        """The workspace's ``.AGENTS/`` units, read off the event loop under the config's rules."""
        config = self.config
        return await anyio.to_thread.run_sync(
            lambda: load_project_context(
                workspace,
                max_file_bytes=config.project_context.max_file_bytes,
                vendored=config.instruction_files.vendored,
            )
        )

    async def build(
        self,
        workspace: str | os.PathLike[str],
        *,
        agent: str,
        project_id: str | None = None,
        business_rules: LayerInput = (),
        task_state: LayerInput = (),
        budgets: Mapping[str, int] | None = None,
        tokenizer: Tokenizer | str | None = None,
    ) -> PromptBuild:
        """Like ``build_prompt`` but also returns the discovery report the debug print shows."""
        identity = self.roster.identity(agent)  # UnknownAgent first: the cheapest check
        merged = self.effective_budgets(budgets)
        root = Path(await anyio.to_thread.run_sync(resolve_workspace, workspace))
        spec = tokenizer if tokenizer is not None else self.config.tokenizer
        chosen = self._tokenizers.get(spec) if isinstance(spec, str) else spec
        if chosen is None:  # loading a rank file takes a while: build it off the loop, once
            chosen = await anyio.to_thread.run_sync(self.tokenizer, spec)
        rules = _units("business_rules", business_rules)
        state = _units("task_state", task_state)

        instruction_set = await self._instruction_files.load(
            root, agent=agent, project_id=project_id
        )
        project_context = await self.project_context(root)
        layers: dict[str, str | Unit | Sequence[Unit]] = {
            "identity": Unit(id=agent, text=identity),
            "instruction_files": [
                Unit(id=source.path, text=source.content, source=source.path)
                for source in instruction_set.sources
            ],
            "project_context": project_context.units,
            "business_rules": rules,
            "task_state": state,
        }
        call = functools.partial(
            assemble,
            layers,
            budgets=merged,
            strategies=self.config.strategies.as_mapping(),
            tokenizer=chosen,
        )
        # bytes/4 costs a length per unit; an exact tokenizer encodes whole layers, which can
        # take a noticeable time on large workspaces: then keep the event loop free.
        if type(chosen) is ApproximateTokenizer:
            prompt = call()
        else:
            prompt = await anyio.to_thread.run_sync(call)
        warnings = [*instruction_set.warnings, *project_context.warnings]
        envelope = self.config.envelope
        return PromptBuild(
            prompt=prompt,
            workspace=root,
            agent=agent,
            project_id=project_id,
            instruction_set=instruction_set,
            project_context=project_context,
            envelope=envelope,
            budgets=merged,
            tokenizer_name=chosen.name,
            warnings=tuple(warnings),
        )

    async def build_prompt(
        self,
        workspace: str | os.PathLike[str],
        *,
        agent: str,
        project_id: str | None = None,
        business_rules: LayerInput = (),
        task_state: LayerInput = (),
        budgets: Mapping[str, int] | None = None,
        tokenizer: Tokenizer | str | None = None,
    ) -> AssembledPrompt:
        """Assemble the five-layer prompt for ``agent`` working in ``workspace``.

        Instruction files are units in ascending precedence (root first, the database row
        last), so a tight budget discards the least authoritative first. ``budgets`` merge
        over the config's; ``tokenizer`` is a ``Tokenizer`` or a spec such as
        ``"tiktoken:cl100k_base"``. Raises ``UnknownAgent`` for a slug not in the roster and
        ``WorkspaceNotFoundError`` (a ``FileNotFoundError``) for a bad workspace.
        """
        build = await self.build(
            workspace,
            agent=agent,
            project_id=project_id,
            business_rules=business_rules,
            task_state=task_state,
            budgets=budgets,
            tokenizer=tokenizer,
        )
        return build.prompt


def _check_tokenizer_file(spec: str) -> None:
    reference = spec.removeprefix("tiktoken:")
    if reference != spec and looks_like_path(reference) and not Path(reference).is_file():
        raise ConfigError(
            f"tokenizer {spec!r}: no such rank file (a relative path in a config file is "
            "relative to that file)"
        )
