"""The ``skills`` layer: catalog entries, then activations, rendered the same way every time.

::

    from harness.skills._units import skill_units, skills_record

    units = skill_units(catalog, [activation])     # entries (user, then project, by name), then
    record = skills_record(catalog, [activation])  # the activations; the manifest's record

The order is the layer's discard order (``fit_whole_units`` in the extended layout): over
its budget, catalog entries go first (user before project, then by name) and activations
last; each drop is in the layer's report. A unit is whole or absent, never shortened. An
activation's body is rendered inside a block naming its ``SKILL.md``, which the assembler
keeps its text from closing or forging, followed by its resources (listed, not read).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.errors import ArgumentError, ArgumentTypeError
from harness.prompt_assembler import AssembledPrompt, Unit
from harness.skills._catalog import SkillCatalog
from harness.skills._model import Skill, SkillActivation

__all__ = [
    "LAYER",
    "activation_unit",
    "entry_unit",
    "skill_drops",
    "skill_units",
    "skills_layer",
    "skills_record",
]

LAYER = "skills"


def entry_unit(skill: Skill) -> Unit:
    """One catalog entry: name, description and location, nothing else (a rule's also says
    its format and how it is activated)."""
    if skill.kind == "rule":
        text = (
            f"rule: {skill.name}\ndescription: {skill.description or '(none)'}\n"
            f"format: {skill.format} ({skill.activation})"
        )
    else:
        text = f"skill: {skill.name}\ndescription: {skill.description}\nlocation: {skill.path}"
    return Unit(skill.unit_id, text, version=skill.digest)


def activation_unit(activation: SkillActivation) -> Unit:
    """One activation: the body, then the resources it may ask for (never read here)."""
    lines = [f"{activation.kind} {activation.name} (activated)", "", activation.body]
    if activation.resources:
        lines += ["", "resources (not loaded; open one only when these instructions need it):"]
        lines += [f"- {path}" for path in activation.resources]
    return Unit(
        f"activation:{activation.name}",
        "\n".join(lines),
        source=activation.path or f"skill:{activation.name}",
        version=activation.digest,
    )


def _checked(activations: Sequence[SkillActivation]) -> tuple[SkillActivation, ...]:
    seen: set[str] = set()
    for activation in activations:
        if not isinstance(activation, SkillActivation):
            raise ArgumentTypeError(
                f"activations: expected SkillActivation values (from catalog.activate), got "
                f"{type(activation).__name__}"
            )
        if activation.name in seen:
            raise ArgumentError(f"activations: skill {activation.name!r} is activated twice")
        seen.add(activation.name)
    return tuple(activations)


def skill_units(
    catalog: SkillCatalog | None, activations: Sequence[SkillActivation] = ()
) -> list[Unit]:
    """The ``skills`` layer's units in discard order: entries, then activations as given."""
    if catalog is not None and not isinstance(catalog, SkillCatalog):
        raise ArgumentTypeError(
            f"skills: expected a SkillCatalog (from h.skills(...)), got {type(catalog).__name__}"
        )
    entries = catalog.derived(LAYER, lambda: _entries(catalog)) if catalog is not None else ()
    return [*entries, *(activation_unit(activation) for activation in _checked(activations))]


def _entries(catalog: SkillCatalog) -> tuple[Unit, ...]:
    return tuple(entry_unit(skill) for skill in catalog.skills)


def skills_layer(
    catalog: SkillCatalog | None,
    activations: Sequence[SkillActivation],
    layers: Sequence[str],
) -> list[Unit]:
    """``skill_units`` for a layout with the layers ``layers``; without a ``skills`` layer
    ``ArgumentError`` (a ``ValueError``) says what to use."""
    if LAYER not in layers:
        raise ArgumentError(
            f"skills= and activations= need the {LAYER!r} layer, which this layout lacks (it "
            f"has {', '.join(layers)}): use EXTENDED_LAYOUT (config: [layout] layers = [...] "
            f"including {LAYER!r}) or add the layer"
        )
    return skill_units(catalog, activations)


def skills_record(
    catalog: SkillCatalog | None, activations: Sequence[SkillActivation] = ()
) -> dict[str, Any]:
    """What a manifest records of the skills: the catalog's digest and entries (name, scope,
    path, SKILL.md sha256) and each activation (see ``SkillActivation.record``)."""
    return {
        "catalog_digest": catalog.digest if catalog is not None else None,
        "catalog": [
            {"name": s.name, "scope": s.scope, "kind": s.kind, "path": s.path, "sha256": s.digest}
            for s in (catalog.skills if catalog is not None else ())
        ],
        "activations": [activation.record() for activation in _checked(activations)],
    }


def skill_drops(prompt: AssembledPrompt) -> list[str]:
    """A warning per unit of the ``skills`` layer its budget dropped (none is ever cut)."""
    return [
        f"skills: {unit} dropped whole: over the skills budget of {layer.budget} tokens; "
        "raise budgets.skills (--budget skills=N) to keep it"
        for layer in prompt.layers
        if layer.name == LAYER
        for unit in layer.dropped
    ]
