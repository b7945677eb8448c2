"""Generated from harness._EXPORTS by test_public_api.py --write: do not edit."""

from harness import debug as debug
from harness._agents import UnknownAgent as UnknownAgent
from harness._harness import BuildOptions as BuildOptions
from harness._harness import Harness as Harness
from harness._harness import HarnessNotRunning as HarnessNotRunning
from harness._harness import PromptBuild as PromptBuild
from harness._project_root import find_project_root as find_project_root
from harness._tokenizer import ApproximateTokenizer as ApproximateTokenizer
from harness._tokenizer import TiktokenTokenizer as TiktokenTokenizer
from harness._tokenizer import Tokenizer as Tokenizer
from harness._tokenizer import TokenizerLoadError as TokenizerLoadError
from harness._version import __version__ as __version__
from harness.config import ConfigError as ConfigError
from harness.config import HarnessConfig as HarnessConfig
from harness.config import load_config as load_config
from harness.context_requests import ContextRequest as ContextRequest
from harness.context_requests import NotReady as NotReady
from harness.context_requests import Readiness as Readiness
from harness.context_requests import Requirement as Requirement
from harness.context_requests import readiness as readiness
from harness.errors import HarnessError as HarnessError
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
from harness.instruction_files.stores import InstructionStore as InstructionStore
from harness.manifests._diff import ManifestDiff as ManifestDiff
from harness.manifests._errors import ManifestNotFound as ManifestNotFound
from harness.manifests._errors import ManifestStoreError as ManifestStoreError
from harness.manifests._replay import Replay as Replay
from harness.manifests._replay import ReplayError as ReplayError
from harness.manifests._store import ManifestStore as ManifestStore
from harness.prompt_assembler import DEFAULT_BUDGETS as DEFAULT_BUDGETS
from harness.prompt_assembler import DEFAULT_LAYOUT as DEFAULT_LAYOUT
from harness.prompt_assembler import DEFAULT_STRATEGIES as DEFAULT_STRATEGIES
from harness.prompt_assembler import EXTENDED_LAYOUT as EXTENDED_LAYOUT
from harness.prompt_assembler import LAYERS as LAYERS
from harness.prompt_assembler import AssembledPrompt as AssembledPrompt
from harness.prompt_assembler import BudgetError as BudgetError
from harness.prompt_assembler import LayerReport as LayerReport
from harness.prompt_assembler import LayerSpec as LayerSpec
from harness.prompt_assembler import Layout as Layout
from harness.prompt_assembler import Strategy as Strategy
from harness.prompt_assembler import Unit as Unit
from harness.prompt_assembler import assemble as assemble
from harness.runtime import ChildSpec as ChildSpec
from harness.runtime._errors import AlreadyRegistered as AlreadyRegistered
from harness.runtime._errors import MaxChildrenReached as MaxChildrenReached
from harness.skills import Skill as Skill
from harness.skills import SkillActivation as SkillActivation
from harness.skills import SkillCatalog as SkillCatalog
from harness.skills import SkillError as SkillError
from harness.skills import UnknownSkill as UnknownSkill
from harness.tools import BlockedTool as BlockedTool
from harness.tools import CatalogCheck as CatalogCheck
from harness.tools import PinStore as PinStore
from harness.tools import PinStoreError as PinStoreError
from harness.tools import ToolCatalog as ToolCatalog
from harness.tools import ToolCatalogError as ToolCatalogError
from harness.tools import ToolChange as ToolChange
from harness.tools import ToolEntry as ToolEntry
from harness.tools import ToolPolicy as ToolPolicy

__all__ = [
    "DEFAULT_BUDGETS",
    "DEFAULT_LAYOUT",
    "DEFAULT_STRATEGIES",
    "EXTENDED_LAYOUT",
    "LAYERS",
    "PHASES",
    "AlreadyRegistered",
    "ApproximateTokenizer",
    "AssembledPrompt",
    "BlockedTool",
    "BudgetError",
    "BuildOptions",
    "CatalogCheck",
    "ChildSpec",
    "ConfigError",
    "ContextRequest",
    "Halt",
    "Harness",
    "HarnessConfig",
    "HarnessError",
    "HarnessNotRunning",
    "HookHandler",
    "HookOutcome",
    "HookRegistration",
    "HookTimeoutError",
    "Hooks",
    "InstructionFiles",
    "InstructionFilesSettings",
    "InstructionSet",
    "InstructionSource",
    "InstructionStore",
    "InstructionStoreError",
    "LayerReport",
    "LayerSpec",
    "Layout",
    "ManifestDiff",
    "ManifestNotFound",
    "ManifestStore",
    "ManifestStoreError",
    "MaxChildrenReached",
    "NotReady",
    "PinStore",
    "PinStoreError",
    "PromptBuild",
    "Readiness",
    "Replay",
    "ReplayError",
    "Requirement",
    "Skill",
    "SkillActivation",
    "SkillCatalog",
    "SkillError",
    "Strategy",
    "TargetOutsideWorkspace",
    "TiktokenTokenizer",
    "Tokenizer",
    "TokenizerLoadError",
    "ToolCatalog",
    "ToolCatalogError",
    "ToolChange",
    "ToolEntry",
    "ToolPolicy",
    "Unit",
    "UnknownAgent",
    "UnknownSkill",
    "WorkspaceNotFoundError",
    "__version__",
    "assemble",
    "debug",
    "find_project_root",
    "load_config",
    "readiness",
]
