"""Every error harness raises on purpose is a ``HarnessError`` and also the builtin it
naturally is (the CLI needs only that one class for exit status 2), and the tree in
``harness/errors.py``'s docstring is the real one. After adding or moving an error,
regenerate that tree: ``python tests/errors/test_errors.py --write``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":  # run as a script: this checkout's harness, not an installed one
    sys.path.insert(0, str(ROOT))

import harness  # noqa: E402
from harness import HarnessError  # noqa: E402

ERRORS = ROOT / "harness" / "errors.py"
#: The line of ``harness/errors.py``'s docstring after which the tree is written.
TREE_HEADING = "The whole tree (each error, the builtins it also is, where to import it from)::"

#: Exception classes that never leave harness (control flow inside one function).
INTERNAL = {
    "harness.instruction_files.discovery._reader.DiscoveryCancelled",
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
        ("harness._agents.UnknownAgent", KeyError),
        ("harness.config.ConfigError", ValueError),
        ("harness.instruction_files.WorkspaceNotFoundError", FileNotFoundError),
        ("harness._tokenizer.TokenizerLoadError", ValueError),
        ("harness.hooks.HookTimeoutError", TimeoutError),
        ("harness.runtime.SupervisorNotRunning", RuntimeError),
        ("harness.runtime.AdminCallBeforeReady", RuntimeError),
        ("harness.runtime.UnknownChild", KeyError),
        ("harness.runtime.DuplicateChild", ValueError),
        ("harness._harness.HarnessNotRunning", RuntimeError),
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


def _public_home(cls: type[BaseException]) -> str:
    """Where a user imports ``cls`` from: the top level when it is exported there, else the
    shortest public module whose ``__all__`` names it, else its defining module."""
    if harness._EXPORTS.get(cls.__name__) is not None:
        return "harness"
    homes = []
    for name in _modules():
        module = importlib.import_module(name)
        if cls.__name__ in getattr(module, "__all__", ()) and getattr(module, cls.__name__) is cls:
            homes.append(name)
    return min(homes, key=lambda home: (home.count("."), home)) if homes else cls.__module__


def _parent(cls: type[BaseException]) -> type[BaseException]:
    """The first base that is a ``HarnessError``: where the class sits in the tree."""
    return next(base for base in cls.__bases__ if issubclass(base, HarnessError))


def render_tree() -> str:
    """The exception tree from the code: one line per public error, indented under its
    parent, with the builtin bases it adds in parentheses and its import location."""
    public = [c for c in _exception_classes() if not c.__name__.startswith("_")]
    children: dict[type[BaseException], list[type[BaseException]]] = {}
    for cls in public:
        if cls is not HarnessError:
            children.setdefault(_parent(cls), []).append(cls)
    lines: list[str] = []

    def add(cls: type[BaseException], depth: int) -> None:
        extra = [b.__name__ for b in cls.__bases__ if not issubclass(b, HarnessError)]
        label = "    " * depth + cls.__name__ + (f" ({', '.join(extra)})" if extra else "")
        lines.append(f"{label:<44} {_public_home(cls)}")
        for child in sorted(children.get(cls, []), key=lambda c: c.__name__):
            add(child, depth + 1)

    add(HarnessError, 0)
    return "\n".join(lines) + "\n"


def _written_tree(source: str) -> str:
    """The tree as written in ``harness/errors.py``'s docstring (indented four spaces)."""
    after = source.split(TREE_HEADING + "\n\n", 1)[1]
    block = re.match(r"((?:    .*\n)+)", after)
    assert block is not None, "harness/errors.py: no indented tree after its heading"
    return "".join(line[4:] + "\n" for line in block.group(1).splitlines())


def test_the_docstring_tree_is_the_real_exception_tree() -> None:
    written = _written_tree(ERRORS.read_text(encoding="utf-8"))
    assert written == render_tree(), (
        "harness/errors.py's exception tree is stale: "
        "run python tests/errors/test_errors.py --write"
    )
    assert len(written.splitlines()) >= 40  # every public error, not a sample


def test_the_tree_names_each_error_once_with_its_real_bases() -> None:
    for line in render_tree().splitlines():
        name = line.split()[0]
        home = importlib.import_module(line.split()[-1])
        cls = getattr(home, name)
        bases = re.search(r"\((.*)\)", line)
        if bases:
            assert bases.group(1).split(", ") == [
                b.__name__ for b in cls.__bases__ if not issubclass(b, HarnessError)
            ]
    names = [line.split()[0] for line in render_tree().splitlines()]
    assert len(names) == len(set(names))


def write_tree() -> None:
    source = ERRORS.read_text(encoding="utf-8")
    old = _written_tree(source)
    indented = "".join(f"    {line}\n" for line in old.splitlines())
    new = "".join(f"    {line}\n" for line in render_tree().splitlines())
    ERRORS.write_text(
        source.replace(TREE_HEADING + "\n\n" + indented, TREE_HEADING + "\n\n" + new, 1),
        encoding="utf-8",
    )


def test_one_renderer_for_reasons_and_the_old_names_warn() -> None:
    from enum import Enum

    from harness.errors import describe, describe_reason
    from harness.workspace import SymlinkRefusal, refusal_message
    from harness.workspace import describe as describe_refusal

    class Exit(Enum):
        NORMAL = "normal"

    assert describe_reason(RuntimeError("boom")) == "RuntimeError(boom)"
    assert describe_reason(ValueError()) == "ValueError"
    assert describe_reason(Exit.NORMAL) == "normal"
    refusal = SymlinkRefusal("outside")
    with pytest.warns(DeprecationWarning, match="describe_reason"):
        assert describe(KeyError("x")) == describe_reason(KeyError("x"))
    with pytest.warns(DeprecationWarning, match="refusal_message"):
        assert describe_refusal(refusal) == refusal_message(refusal)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write_tree()
    print(f"wrote the exception tree in {ERRORS}")
