"""CONTRACT section 14: every error harness raises on purpose is a ``HarnessError`` and also
the builtin it naturally is; the CLI needs only that one class for exit status 2."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import harness
from harness import HarnessError

#: Exception classes that never leave harness (control flow inside one function).
INTERNAL = {
    "harness.instruction_files.discovery.reader.DiscoveryCancelled",
}


def _modules() -> list[str]:
    names = ["harness"]
    for info in pkgutil.walk_packages(harness.__path__, "harness."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("harness")
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [cls for key, cls in sorted(found.items()) if key not in INTERNAL]


def test_every_exception_class_of_harness_is_a_harness_error() -> None:
    classes = _exception_classes()
    assert len(classes) >= 20  # the walk found the package's errors
    offenders = [
        f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, HarnessError)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("dotted", "builtin"),
    [
        ("harness.agents.UnknownAgent", KeyError),
        ("harness.config.ConfigError", ValueError),
        ("harness.instruction_files.WorkspaceNotFoundError", FileNotFoundError),
        ("harness.tokenizer.TokenizerLoadError", ValueError),
        ("harness.hooks.HookTimeoutError", TimeoutError),
        ("harness.runtime.SupervisorNotRunning", RuntimeError),
        ("harness.runtime.AdminCallBeforeReady", RuntimeError),
        ("harness.runtime.UnknownChild", KeyError),
        ("harness.runtime.DuplicateChild", ValueError),
        ("harness.harness.HarnessNotRunning", RuntimeError),
        ("harness.cli.UsageError", ValueError),
    ],
)
def test_each_error_keeps_its_builtin(dotted: str, builtin: type[BaseException]) -> None:
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, HarnessError) and issubclass(cls, builtin)


def test_runtime_argument_errors_are_harness_errors() -> None:
    from harness.runtime import ChildSpec, Supervisor

    async def start(task_status: object) -> None: ...

    with pytest.raises(ValueError, match="non-empty") as bad_id:
        ChildSpec("", start)
    with pytest.raises(ValueError, match="strategy") as bad_strategy:
        Supervisor([], strategy="one_for_none")  # type: ignore[arg-type]
    assert isinstance(bad_id.value, HarnessError) and isinstance(bad_strategy.value, HarnessError)
