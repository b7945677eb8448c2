"""Hooks: an immutable phase -> handlers value whose chain halts and fails closed."""

from harness.hooks.hooks import PHASES as PHASES
from harness.hooks.hooks import Halt as Halt
from harness.hooks.hooks import HookHandler as HookHandler
from harness.hooks.hooks import HookOutcome as HookOutcome
from harness.hooks.hooks import HookRegistration as HookRegistration
from harness.hooks.hooks import Hooks as Hooks
from harness.hooks.hooks import HookTimeoutError as HookTimeoutError

__all__ = [
    "PHASES",
    "Halt",
    "HookHandler",
    "HookOutcome",
    "HookRegistration",
    "HookTimeoutError",
    "Hooks",
]
