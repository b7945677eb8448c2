"""Hooks: an immutable phase -> handlers value whose chain halts and fails closed.

``Hooks`` is the pure value (``harness.hooks.hooks``); ``load_hook_settings`` reads Claude Code
hook settings into one, whose command hooks run as subprocesses (``harness.hooks.command``).
"""

from harness.hooks.errors import CommandHookError as CommandHookError
from harness.hooks.errors import HookResultError as HookResultError
from harness.hooks.errors import HookSettingsError as HookSettingsError
from harness.hooks.errors import HookTimeoutError as HookTimeoutError
from harness.hooks.errors import HookTypeError as HookTypeError
from harness.hooks.errors import HookValueError as HookValueError
from harness.hooks.hooks import PHASES as PHASES
from harness.hooks.hooks import Halt as Halt
from harness.hooks.hooks import HookHandler as HookHandler
from harness.hooks.hooks import HookOutcome as HookOutcome
from harness.hooks.hooks import HookRegistration as HookRegistration
from harness.hooks.hooks import Hooks as Hooks
from harness.hooks.settings import HookSettings as HookSettings
from harness.hooks.settings import load_hook_settings as load_hook_settings

__all__ = [
    "PHASES",
    "CommandHookError",
    "Halt",
    "HookHandler",
    "HookOutcome",
    "HookRegistration",
    "HookResultError",
    "HookSettings",
    "HookSettingsError",
    "HookTimeoutError",
    "HookTypeError",
    "HookValueError",
    "Hooks",
    "load_hook_settings",
]
