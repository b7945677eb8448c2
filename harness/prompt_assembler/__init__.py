"""The pure prompt assembler: ordered layers (a layout), each trimmed to its token budget.

    from harness.prompt_assembler import Unit, assemble

    prompt = assemble(
        {
            "identity": "You are the reviewer.",
            "instruction_files": [Unit("AGENTS.md", "Run the tests.", source="AGENTS.md")],
        }
    )
    print(prompt.text)
    print(prompt.manifest()["layers"][1]["kept"])  # ['AGENTS.md']

``assemble`` is a pure, synchronous function of its arguments: no I/O, no event loop, nothing
kept between calls (unless the caller passes its own ``AssemblyCache``). Every trimming
decision is deterministic and reported (which units were kept, dropped or cut, and why), so a
prompt can be explained and reproduced byte for byte from its manifest.

The package's parts, each importing only those before it: ``values`` (layers, strategies, units,
reports), ``layout`` (layers as data), ``render`` (attribution blocks and neutralisation),
``budgets`` (the one budget check), ``strategies`` (one module per trimming strategy, found
through the ``Strategy`` enum), ``manifest`` (the typed, versioned manifest), ``cache`` (memos an
owner of many builds keeps), ``prompt`` (``AssembledPrompt``), ``assembly`` (``assemble``
itself) and ``replay`` (``assemble``'s arguments rebuilt from a manifest).
"""

from __future__ import annotations

from harness.prompt_assembler._assembly import assemble, merge_strategies
from harness.prompt_assembler._budgets import BudgetError, check_envelope, merge_budgets
from harness.prompt_assembler._cache import AssemblyCache
from harness.prompt_assembler._layout import DEFAULT_LAYOUT, EXTENDED_LAYOUT, LayerSpec, Layout
from harness.prompt_assembler._manifest import (
    SCHEMA_VERSION,
    DroppedUnitManifest,
    LayerManifest,
    Manifest,
    ManifestSchemaError,
    UnitManifest,
)
from harness.prompt_assembler._prompt import STALE, AssembledPrompt
from harness.prompt_assembler._render import neutralise_unit_text, restore_unit_text
from harness.prompt_assembler._replay import ReplayInputs, ReplayProblem, replay_inputs
from harness.prompt_assembler._values import (
    AUTHORITY,
    DEFAULT_BUDGETS,
    DEFAULT_STRATEGIES,
    INSTRUCTION_LAYERS,
    LAYER_SEPARATOR,
    LAYERS,
    TRUNCATION_MARKER,
    UNIT_SEPARATOR,
    AssemblyError,
    AssemblyTypeError,
    LayerReport,
    Strategy,
    Trust,
    Unit,
)

__all__ = [
    "AUTHORITY",
    "DEFAULT_BUDGETS",
    "DEFAULT_LAYOUT",
    "DEFAULT_STRATEGIES",
    "EXTENDED_LAYOUT",
    "INSTRUCTION_LAYERS",
    "LAYERS",
    "LAYER_SEPARATOR",
    "SCHEMA_VERSION",
    "STALE",
    "TRUNCATION_MARKER",
    "UNIT_SEPARATOR",
    "AssembledPrompt",
    "AssemblyCache",
    "AssemblyError",
    "AssemblyTypeError",
    "BudgetError",
    "DroppedUnitManifest",
    "LayerManifest",
    "LayerReport",
    "LayerSpec",
    "Layout",
    "Manifest",
    "ManifestSchemaError",
    "ReplayInputs",
    "ReplayProblem",
    "Strategy",
    "Trust",
    "Unit",
    "UnitManifest",
    "assemble",
    "check_envelope",
    "merge_budgets",
    "merge_strategies",
    "neutralise_unit_text",
    "replay_inputs",
    "restore_unit_text",
]
