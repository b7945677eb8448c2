"""What one build takes and gives: its keywords (``BuildOptions``) and its result
(``PromptBuild``, what ``debug`` prints), and the five layers made from what was read.

::

    from harness.build import BUILD_DEFAULTS, BuildOptions

    options: BuildOptions = {"project_id": "acme", "targets": ["src/app.py"]}
    given: BuildOptions = {**BUILD_DEFAULTS, **options}   # every keyword, defaults filled in
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from harness._project_context import ProjectContext
from harness.config import Envelope
from harness.context_requests import ContextRequest, Readiness
from harness.errors import ArgumentTypeError
from harness.instruction_files import InstructionSet
from harness.prompt_assembler import AssembledPrompt, Unit
from harness.prompt_assembler._allocation import Allocation
from harness.skills._catalog import SkillCatalog
from harness.tools._units import tools_record

if TYPE_CHECKING:
    from harness._tokenizer import Tokenizer
    from harness.skills._model import SkillActivation
    from harness.tools._check import CatalogCheck

__all__ = [
    "BUILD_DEFAULTS",
    "BuildOptions",
    "LayerInput",
    "PromptBuild",
    "check_options",
    "emptied_by_budget",
    "five_layers",
    "normalised_units",
    "unit_imports",
]

#: What a caller may pass for ``business_rules`` or ``task_state``: one string (one unit whose
#: id is the layer name), one ``Unit``, or a sequence of units and strings in discard order
#: (oldest first). A string in a sequence becomes a unit with id ``"<layer>:<n>"`` (1-based).
LayerInput = str | Unit | Sequence[Unit | str]


class BuildOptions(TypedDict, total=False):
    """The optional keywords of ``Harness.build`` / ``build_prompt`` (and of
    ``harness.debug.print`` / ``aprint``), written once. Each is optional; its default is in
    ``BUILD_DEFAULTS``. A type checker reports a misspelt keyword or a wrong type::

        options: BuildOptions = {"project_id": "acme", "budgets": {"task_state": 500}}
        prompt = await h.build_prompt("examples/acme", agent="reviewer", **options)
    """

    project_id: str | None
    business_rules: LayerInput
    task_state: LayerInput
    budgets: Mapping[str, int] | None
    tokenizer: Tokenizer | str | None
    targets: Sequence[str | os.PathLike[str]]
    tools: CatalogCheck | Sequence[CatalogCheck]
    skills: SkillCatalog | None
    activations: Sequence[SkillActivation]
    request: ContextRequest | None
    evidence: Sequence[Unit]
    require_ready: bool
    allocation: Allocation


#: What a build uses for an option not given.
BUILD_DEFAULTS: BuildOptions = {
    "project_id": None,
    "business_rules": (),
    "task_state": (),
    "budgets": None,
    "tokenizer": None,
    "targets": (),
    "tools": (),
    "skills": None,
    "activations": (),
    "request": None,
    "evidence": (),
    "require_ready": False,
    "allocation": "fixed",
}


def check_options(options: Mapping[str, object], allowed: frozenset[str], call: str) -> None:
    """Refuse a keyword the call does not take, as a plain signature would (at run time the
    ``**options`` of a ``TypedDict`` signature accept anything)."""
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ArgumentTypeError(
            f"{call}() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(sorted(allowed))}"
        )


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
    tools: tuple[CatalogCheck, ...] = field(default=())  # the checks given as tools=
    skills: Mapping[str, object] | None = None  # catalog digest and activations (skills=)
    readiness: Readiness | None = field(default=None)  # judged when a request was given

    @property
    def targets(self) -> tuple[str, ...]:
        """What the build was scoped to (``InstructionSet.targets``); empty: the whole tree."""
        return self.instruction_set.targets

    @property
    def chain(self) -> tuple[str, ...]:
        """The directories on the targets' chains (``InstructionSet.chain``)."""
        return self.instruction_set.chain

    @property
    def imports(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Per unit id (an instruction file's path, a ``.AGENTS/`` file's), the files its
        ``@path`` lines imported (workspace-relative path, sha256); units without imports
        are absent."""
        return unit_imports(self.instruction_set, self.project_context)

    def context(self) -> dict[str, object]:
        """What the build was given beyond its layers, JSON-serialisable, for a manifest
        record: the targets, their chains' directories and every unit's imports."""
        imports = {unit: [list(pair) for pair in pairs] for unit, pairs in self.imports.items()}
        context: dict[str, object] = {"targets": list(self.targets), "chain": list(self.chain)}
        context["imports"] = imports
        if self.tools:  # catalog digests, rendered tools' digests, blocked tools and why
            context["tools"] = tools_record(self.tools)
        if self.skills is not None:
            context["skills"] = dict(self.skills)
        return context

    @property
    def slack(self) -> int:
        return self.envelope.input_tokens - sum(self.budgets.values())

    @property
    def headroom(self) -> int:
        return self.envelope.input_tokens - self.prompt.tokens


def unit_imports(
    instruction_set: InstructionSet, project_context: ProjectContext
) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per unit id, what its file's ``@path`` lines imported (units without imports absent)."""
    found = {source.path: source.imports for source in instruction_set if source.imports}
    found.update(project_context.imports)
    return found


def normalised_units(layer: str, value: LayerInput) -> str | Unit | list[Unit]:
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
            raise ArgumentTypeError(
                f"{layer}: expected str or Unit items, got {type(item).__name__}"
            )
    return units


def five_layers(
    identity: Unit,
    instruction_set: InstructionSet,
    project_context: ProjectContext,
    rules: str | Unit | list[Unit],
    state: str | Unit | list[Unit],
) -> dict[str, str | Unit | Sequence[Unit]]:
    """The five layers of a build: instruction sources become units carrying their revision
    and the time they were read (provenance for the manifest)."""
    seen_at = instruction_set.observed_at
    return {
        "identity": identity,
        "instruction_files": [
            Unit(
                id=source.path,
                text=source.content,
                source=source.path,
                version=source.revision,
                observed_at=seen_at,
            )
            for source in instruction_set.sources
        ],
        "project_context": project_context.units,
        "business_rules": rules,
        "task_state": state,
    }


#: Layers whose loss changes what the agent must obey: emptied by the budget, that is a warning.
_MUST_NOT_VANISH = ("identity", "instruction_files")


def emptied_by_budget(prompt: AssembledPrompt) -> list[str]:
    """A warning for each instruction layer that had units but kept none because of its budget."""
    return [
        f"the {layer.name} layer is empty: its budget of {layer.budget} tokens dropped all "
        f"{len(layer.dropped)} unit(s); raise budgets.{layer.name} (--budget "
        f"{layer.name}=N) so the agent gets its "
        + ("identity" if layer.name == "identity" else "instructions")
        for layer in prompt.layers
        if layer.name in _MUST_NOT_VANISH and layer.dropped and not layer.kept
    ]
