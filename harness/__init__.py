"""harness: the context layer of a long-running agent engine.

Everything an engine needs is importable from here::

    import anyio
    from harness import Harness

    async def main() -> None:
        async with Harness() as h:
            prompt = await h.build_prompt("examples/acme", agent="reviewer")
            print(prompt.text)

    anyio.run(main)

This module re-exports the public API and nothing else; each part's own API is its package
(``harness.prompt_assembler``, ``harness.hooks``, ``harness.runtime``, ...).
"""

# Each public name is listed ONCE, in ``_EXPORTS`` (name -> defining module). The re-exports
# are lazy (PEP 562): ``harness.Hooks`` imports ``harness.hooks`` on first use, so a command
# that never touches hooks (``python -m harness debug``) does not pay for importing it. Type
# checkers read ``__init__.pyi`` instead of this file; it is generated from ``_EXPORTS``
# (``python tests/harness_facade/test_public_api.py --write``) and a test fails when the two
# disagree.

import importlib as _importlib

from harness._version import __version__ as __version__

#: Public name -> the module defining it (a name equal to its module's last part, such as
#: ``debug``, is the submodule itself). The one list of the public API.
_EXPORTS: dict[str, str] = {
    # --- tokenizer and prompt assembler ---
    "DEFAULT_BUDGETS": "harness.prompt_assembler",
    "DEFAULT_LAYOUT": "harness.prompt_assembler",
    "DEFAULT_STRATEGIES": "harness.prompt_assembler",
    "EXTENDED_LAYOUT": "harness.prompt_assembler",
    "LAYERS": "harness.prompt_assembler",
    "AssembledPrompt": "harness.prompt_assembler",
    "BudgetError": "harness.prompt_assembler",
    "LayerReport": "harness.prompt_assembler",
    "LayerSpec": "harness.prompt_assembler",
    "Layout": "harness.prompt_assembler",
    "Strategy": "harness.prompt_assembler",
    "Unit": "harness.prompt_assembler",
    "assemble": "harness.prompt_assembler",
    "ApproximateTokenizer": "harness._tokenizer",
    "TiktokenTokenizer": "harness._tokenizer",
    "Tokenizer": "harness._tokenizer",
    "TokenizerLoadError": "harness._tokenizer",
    # --- hooks ---
    "PHASES": "harness.hooks",
    "Halt": "harness.hooks",
    "HookHandler": "harness.hooks",
    "HookOutcome": "harness.hooks",
    "HookRegistration": "harness.hooks",
    "Hooks": "harness.hooks",
    "HookTimeoutError": "harness.hooks",
    # --- instruction files ---
    "InstructionFiles": "harness.instruction_files",
    "InstructionFilesSettings": "harness.instruction_files",
    "InstructionSet": "harness.instruction_files",
    "InstructionSource": "harness.instruction_files",
    "InstructionStore": "harness.instruction_files.stores",
    "InstructionStoreError": "harness.instruction_files",
    "WorkspaceNotFoundError": "harness.instruction_files",
    "TargetOutsideWorkspace": "harness.instruction_files",
    # --- harness, config, agents, errors ---
    "debug": "harness.debug",
    "UnknownAgent": "harness._agents",
    "ConfigError": "harness.config",
    "HarnessConfig": "harness.config",
    "load_config": "harness.config",
    "find_project_root": "harness._project_root",
    "BuildOptions": "harness._harness",
    "Harness": "harness._harness",
    "HarnessNotRunning": "harness._harness",
    "PromptBuild": "harness._harness",
    "HarnessError": "harness.errors",
    # --- runtime (what the Harness constructor takes) ---
    "ChildSpec": "harness.runtime",
    # --- recorded builds (the manifest store) ---
    "ManifestDiff": "harness.manifests._diff",
    "ManifestNotFound": "harness.manifests._errors",
    "ManifestStore": "harness.manifests._store",
    "ManifestStoreError": "harness.manifests._errors",
    "Replay": "harness.manifests._replay",
    "ReplayError": "harness.manifests._replay",
    # --- runtime errors of the many-sessions runtime ---
    "AlreadyRegistered": "harness.runtime._errors",
    "MaxChildrenReached": "harness.runtime._errors",
    # --- context requests: evidence, permissions, readiness ---
    "ContextRequest": "harness.context_requests",
    "NotReady": "harness.context_requests",
    "Readiness": "harness.context_requests",
    "Requirement": "harness.context_requests",
    "readiness": "harness.context_requests",
    # --- tool catalogs pinned by digest ---
    "BlockedTool": "harness.tools",
    "CatalogCheck": "harness.tools",
    "PinStore": "harness.tools",
    "PinStoreError": "harness.tools",
    "ToolCatalog": "harness.tools",
    "ToolCatalogError": "harness.tools",
    "ToolChange": "harness.tools",
    "ToolEntry": "harness.tools",
    "ToolPolicy": "harness.tools",
    # --- skills: a budgeted catalog, recorded activations ---
    "Skill": "harness.skills",
    "SkillActivation": "harness.skills",
    "SkillCatalog": "harness.skills",
    "SkillError": "harness.skills",
    "UnknownSkill": "harness.skills",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> object:
    """Import a public name's module on first access and cache the name here."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _importlib.import_module(module_name)
    value = module if module_name == f"{__name__}.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
