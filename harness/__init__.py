"""harness: the context layer of a long-running agent engine.

This module re-exports the public API (see README.md) and nothing else.

The re-exports are lazy (PEP 562): ``harness.Hooks`` or ``from harness import Hooks`` imports
``harness.hooks`` on first use, so a command that never touches hooks (``python -m harness
debug``) does not pay for importing it. Each name is listed twice, keep the two in step: in
``_EXPORTS`` (name -> defining module, which drives ``__getattr__``, ``__all__`` and ``dir``)
and in the ``TYPE_CHECKING`` block (``import X as X``, so type checkers see the real objects).
"""

import importlib as _importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # --- tokenizer and prompt assembler (core) ---
    from harness.prompt_assembler import DEFAULT_BUDGETS as DEFAULT_BUDGETS
    from harness.prompt_assembler import DEFAULT_STRATEGIES as DEFAULT_STRATEGIES
    from harness.prompt_assembler import LAYERS as LAYERS
    from harness.prompt_assembler import AssembledPrompt as AssembledPrompt
    from harness.prompt_assembler import LayerReport as LayerReport
    from harness.prompt_assembler import Strategy as Strategy
    from harness.prompt_assembler import Unit as Unit
    from harness.prompt_assembler import assemble as assemble
    from harness.tokenizer import ApproximateTokenizer as ApproximateTokenizer
    from harness.tokenizer import TiktokenTokenizer as TiktokenTokenizer
    from harness.tokenizer import Tokenizer as Tokenizer
    from harness.tokenizer import TokenizerLoadError as TokenizerLoadError

    # --- hooks ---
    # isort: split
    from harness.hooks import PHASES as PHASES
    from harness.hooks import Halt as Halt
    from harness.hooks import HookHandler as HookHandler
    from harness.hooks import HookOutcome as HookOutcome
    from harness.hooks import HookRegistration as HookRegistration
    from harness.hooks import Hooks as Hooks
    from harness.hooks import HookTimeoutError as HookTimeoutError

    # --- instruction files ---
    # isort: split
    from harness.instruction_files import InstructionFiles as InstructionFiles
    from harness.instruction_files import InstructionFilesSettings as InstructionFilesSettings
    from harness.instruction_files import InstructionSet as InstructionSet
    from harness.instruction_files import InstructionSource as InstructionSource
    from harness.instruction_files import InstructionStoreError as InstructionStoreError
    from harness.instruction_files import WorkspaceNotFoundError as WorkspaceNotFoundError

    # --- harness, config, agents (main job) ---
    # isort: split
    from harness import debug as debug
    from harness.agents import Roster as Roster
    from harness.agents import UnknownAgent as UnknownAgent
    from harness.config import ConfigError as ConfigError
    from harness.config import HarnessConfig as HarnessConfig
    from harness.config import load_config as load_config
    from harness.config import load_roster as load_roster
    from harness.harness import Harness as Harness
    from harness.harness import PromptBuild as PromptBuild

#: Public name -> the module defining it (a name equal to its module's last part, such as
#: ``debug``, is the submodule itself).
_EXPORTS: dict[str, str] = {
    # --- tokenizer and prompt assembler (core) ---
    "DEFAULT_BUDGETS": "harness.prompt_assembler",
    "DEFAULT_STRATEGIES": "harness.prompt_assembler",
    "LAYERS": "harness.prompt_assembler",
    "AssembledPrompt": "harness.prompt_assembler",
    "LayerReport": "harness.prompt_assembler",
    "Strategy": "harness.prompt_assembler",
    "Unit": "harness.prompt_assembler",
    "assemble": "harness.prompt_assembler",
    "ApproximateTokenizer": "harness.tokenizer",
    "TiktokenTokenizer": "harness.tokenizer",
    "Tokenizer": "harness.tokenizer",
    "TokenizerLoadError": "harness.tokenizer",
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
    "InstructionStoreError": "harness.instruction_files",
    "WorkspaceNotFoundError": "harness.instruction_files",
    # --- harness, config, agents (main job) ---
    "debug": "harness.debug",
    "Roster": "harness.agents",
    "UnknownAgent": "harness.agents",
    "ConfigError": "harness.config",
    "HarnessConfig": "harness.config",
    "load_config": "harness.config",
    "load_roster": "harness.config",
    "Harness": "harness.harness",
    "PromptBuild": "harness.harness",
}

__all__ = list(_EXPORTS)


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
