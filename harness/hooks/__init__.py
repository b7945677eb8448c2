"""Hooks: an immutable phase -> handlers value whose chain halts and fails closed.

Register handlers on a phase, run the phase with a payload, read the outcome::

    import anyio
    from harness.hooks import Halt, Hooks

    hooks = Hooks().register("pre_tool_use", lambda p: Halt("read-only"), match="Write|Edit")
    outcome = anyio.run(hooks.run, "pre_tool_use", {"tool_name": "Edit", "tool_input": {}})
    assert outcome.halted and outcome.reason == "read-only"

``load_hook_settings`` reads Claude Code hook settings (a ``settings.json``) into a ``Hooks``
value whose command hooks run as subprocesses. Command hooks inherit the whole environment of
the process by default, secrets included; ``load_hook_settings(..., env_allowlist=[...])``
gives them only the listed variables plus ``CLAUDE_PROJECT_DIR``.

The parts, one module each: ``hooks`` (the pure ``Hooks`` value and its run loop),
``outcome`` (``Halt``, ``HookOutcome`` and the fail-closed checks), ``matching`` (tool-name
matchers), ``registration`` (the phases, validation at register time), ``cancellation``
(telling an outside cancellation from a handler's failure), ``claude_code`` (Claude Code's hook
protocol), ``command`` and ``leftovers`` (running a command hook, cleaning up after it),
``settings`` (reading settings, hook types by name), ``errors``.
"""

from harness.hooks._errors import CommandHookError as CommandHookError
from harness.hooks._errors import HookResultError as HookResultError
from harness.hooks._errors import HookSettingsError as HookSettingsError
from harness.hooks._errors import HookTimeoutError as HookTimeoutError
from harness.hooks._errors import HookTypeError as HookTypeError
from harness.hooks._errors import HookValueError as HookValueError
from harness.hooks._hooks import PHASES as PHASES
from harness.hooks._hooks import Halt as Halt
from harness.hooks._hooks import HookHandler as HookHandler
from harness.hooks._hooks import HookOutcome as HookOutcome
from harness.hooks._hooks import HookRegistration as HookRegistration
from harness.hooks._hooks import Hooks as Hooks
from harness.hooks._settings import HookSettings as HookSettings
from harness.hooks._settings import load_hook_settings as load_hook_settings

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
