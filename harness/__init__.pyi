"""Generated from harness._EXPORTS by test_public_api.py --write: do not edit."""

from harness import debug as debug
from harness._version import __version__ as __version__
from harness.agents import Roster as Roster
from harness.agents import UnknownAgent as UnknownAgent
from harness.config import ConfigError as ConfigError
from harness.config import HarnessConfig as HarnessConfig
from harness.config import load_config as load_config
from harness.config import load_roster as load_roster
from harness.errors import HarnessError as HarnessError
from harness.harness import Harness as Harness
from harness.harness import PromptBuild as PromptBuild
from harness.hooks import PHASES as PHASES
from harness.hooks import Halt as Halt
from harness.hooks import HookHandler as HookHandler
from harness.hooks import HookOutcome as HookOutcome
from harness.hooks import HookRegistration as HookRegistration
from harness.hooks import Hooks as Hooks
from harness.hooks import HookTimeoutError as HookTimeoutError
from harness.instruction_files import InstructionFiles as InstructionFiles
from harness.instruction_files import InstructionFilesSettings as InstructionFilesSettings
from harness.instruction_files import InstructionSet as InstructionSet
from harness.instruction_files import InstructionSource as InstructionSource
from harness.instruction_files import InstructionStoreError as InstructionStoreError
from harness.instruction_files import TargetOutsideWorkspace as TargetOutsideWorkspace
from harness.instruction_files import WorkspaceNotFoundError as WorkspaceNotFoundError
from harness.manifests.diff import ManifestDiff as ManifestDiff
from harness.manifests.errors import ManifestNotFound as ManifestNotFound
from harness.manifests.errors import ManifestStoreError as ManifestStoreError
from harness.manifests.replay import Replay as Replay
from harness.manifests.replay import ReplayError as ReplayError
from harness.manifests.store import ManifestStore as ManifestStore
from harness.prompt_assembler import DEFAULT_BUDGETS as DEFAULT_BUDGETS
from harness.prompt_assembler import DEFAULT_LAYOUT as DEFAULT_LAYOUT
from harness.prompt_assembler import DEFAULT_STRATEGIES as DEFAULT_STRATEGIES
from harness.prompt_assembler import EXTENDED_LAYOUT as EXTENDED_LAYOUT
from harness.prompt_assembler import LAYERS as LAYERS
from harness.prompt_assembler import AssembledPrompt as AssembledPrompt
from harness.prompt_assembler import LayerReport as LayerReport
from harness.prompt_assembler import LayerSpec as LayerSpec
from harness.prompt_assembler import Layout as Layout
from harness.prompt_assembler import Strategy as Strategy
from harness.prompt_assembler import Unit as Unit
from harness.prompt_assembler import assemble as assemble
from harness.tokenizer import ApproximateTokenizer as ApproximateTokenizer
from harness.tokenizer import TiktokenTokenizer as TiktokenTokenizer
from harness.tokenizer import Tokenizer as Tokenizer
from harness.tokenizer import TokenizerLoadError as TokenizerLoadError

__all__ = [
    "DEFAULT_BUDGETS",
    "DEFAULT_LAYOUT",
    "DEFAULT_STRATEGIES",
    "EXTENDED_LAYOUT",
    "LAYERS",
    "PHASES",
    "ApproximateTokenizer",
    "AssembledPrompt",
    "ConfigError",
    "Halt",
    "Harness",
    "HarnessConfig",
    "HarnessError",
    "HookHandler",
    "HookOutcome",
    "HookRegistration",
    "HookTimeoutError",
    "Hooks",
    "InstructionFiles",
    "InstructionFilesSettings",
    "InstructionSet",
    "InstructionSource",
    "InstructionStoreError",
    "LayerReport",
    "LayerSpec",
    "Layout",
    "ManifestDiff",
    "ManifestNotFound",
    "ManifestStore",
    "ManifestStoreError",
    "PromptBuild",
    "Replay",
    "ReplayError",
    "Roster",
    "Strategy",
    "TargetOutsideWorkspace",
    "TiktokenTokenizer",
    "Tokenizer",
    "TokenizerLoadError",
    "Unit",
    "UnknownAgent",
    "WorkspaceNotFoundError",
    "__version__",
    "assemble",
    "debug",
    "load_config",
    "load_roster",
]
