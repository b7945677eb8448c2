"""The root of every error harness raises on purpose.

Catch ``HarnessError`` to handle anything the library reports deliberately, whatever part
raised it; each concrete error also derives from the builtin it naturally is, so existing
``except ValueError`` / ``except KeyError`` code keeps working::

    from harness import HarnessError

    try:
        prompt = await h.build_prompt("/srv/checkouts/acme", agent="reviewer")
    except HarnessError as exc:
        print(f"cannot build the prompt: {exc}")

An exception that does not derive from ``HarnessError`` escaping harness is a bug.

How errors are named. An error for something looked up and missing has one of two shapes,
and the shape tells which builtin it also is:

- ``Unknown<Thing>`` (``UnknownAgent``, ``UnknownChild``, ``UnknownSkill``) and
  ``ManifestNotFound`` are each a ``KeyError``: a name or id absent from a table harness holds
  (the roster, a supervisor's children, the skill catalog, the manifest store). Their message
  lists what is known or says where the ids come from.
- ``WorkspaceNotFoundError`` is a ``FileNotFoundError``: a path on disk that does not exist
  (the builtin's own ``...Error`` spelling is kept, as ``FileNotFoundError`` has it).

These names are public and kept for compatibility; a new "missing" error takes the
``Unknown<Thing>`` form for an id or name and ``<Thing>NotFoundError`` for a path.

The whole tree (each error, the builtins it also is, where to import it from)::

    HarnessError (Exception)                     harness
        ActorError                               harness.runtime
            ActorExited                          harness.runtime
            AlreadyRegistered (ValueError)       harness
            CallingSelf (RuntimeError)           harness.runtime
            MailboxFull                          harness.runtime
            NoProc                               harness.runtime
        ArgumentError (ValueError)               harness.errors
        ArgumentTypeError (TypeError)            harness.errors
        AssemblyError (ValueError)               harness.prompt_assembler
            BudgetError                          harness
            ManifestSchemaError                  harness.prompt_assembler
        AssemblyTypeError (TypeError)            harness.prompt_assembler
        CacheTaskCrashed (RuntimeError)          harness.instruction_files._cache
        CaseError (ValueError)                   harness.cases
        CommandHookError (RuntimeError)          harness.hooks
        ConfigError (ValueError)                 harness
        DiffOptionsError (ValueError)            harness.inspector._command
        HookResultError (TypeError)              harness.hooks
        HookTimeoutError (TimeoutError)          harness
        HookTypeError (TypeError)                harness.hooks
        HookValueError (ValueError)              harness.hooks
            HookSettingsError                    harness.hooks
        ImportRefused (ValueError)               harness.workspace._imports
        InstructionStoreError                    harness
        ManifestStoreError (OSError)             harness
            ManifestNotFound (KeyError)          harness
        NotReady (RuntimeError)                  harness
        PinStoreError (OSError)                  harness
        PostgresOptionError (ValueError)         harness.instruction_files.stores.postgres
        ReplayError (ValueError)                 harness
        SkillError (ValueError)                  harness
        StateError (RuntimeError)                harness.errors
            HarnessNotRunning                    harness
        StoreSchemeError (ValueError)            harness.stores
        SupervisorError                          harness.runtime
            AdminCallBeforeReady (RuntimeError)  harness.runtime
            ChildRunning                         harness.runtime
            DuplicateChild (ValueError)          harness.runtime
            FailedToStartChild                   harness.runtime
            MaxChildrenReached (RuntimeError)    harness
            MaxRestartsExceeded                  harness.runtime
            SupervisorNotRunning (RuntimeError)  harness.runtime
            UnknownChild (KeyError)              harness.runtime
        TargetOutsideWorkspace (ValueError)      harness
        TokenizerLoadError (ValueError)          harness
        ToolCatalogError (ValueError)            harness
        UnitFileError (ValueError)               harness._unit_files
        UnknownAgent (KeyError)                  harness
        UnknownSkill (KeyError)                  harness
        UsageError (ValueError)                  harness.cli
        ViewError (OSError)                      harness.inspector
        WalkCancelled                            harness.workspace
        WorkspaceNotFoundError (FileNotFoundError) harness
"""

from __future__ import annotations

import warnings
from enum import Enum

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "ConfigError",
    "HarnessError",
    "StateError",
    "describe",
    "describe_reason",
    "single_cause",
]


class HarnessError(Exception):
    """Base class of every error harness raises on purpose; the message says what to do."""


class ConfigError(HarnessError, ValueError):
    """A configuration file or value that cannot be used; the message names the key."""


class ArgumentError(HarnessError, ValueError):
    """An argument a call cannot use (an empty agent slug, conflicting options, ...)."""


class ArgumentTypeError(HarnessError, TypeError):
    """An argument of a type a call cannot use."""


class StateError(HarnessError, RuntimeError):
    """A call the object's current state does not allow (not started, already running, ...)."""


def single_cause(exc: BaseException) -> BaseException:
    """The one error inside nested single-member exception groups (task groups wrap what
    their tasks raise); a group of several, or a plain exception, is returned as it is."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def describe_reason(reason: object) -> str:
    """Render an error (or any exit reason) for a message or a log line: ``Type(text)``.

    The one renderer shared by the runtime (exit reasons, an enum member as its value) and
    the hooks (a halt's reason)::

        >>> describe_reason(RuntimeError("boom")), describe_reason(ValueError())
        ('RuntimeError(boom)', 'ValueError')
        >>> describe_reason("normal")
        'normal'
    """
    if isinstance(reason, BaseException):
        text = str(reason)
        return f"{type(reason).__name__}({text})" if text else type(reason).__name__
    if isinstance(reason, Enum):
        return str(reason.value)
    return str(reason)


def describe(reason: object) -> str:
    """Deprecated alias of :func:`describe_reason` (one name per idea); removed next release."""
    warnings.warn(
        "harness.errors.describe is deprecated: call harness.errors.describe_reason",
        DeprecationWarning,
        stacklevel=2,
    )
    return describe_reason(reason)
