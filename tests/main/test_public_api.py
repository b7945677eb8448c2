"""The top-level package re-exports exactly the public API, lazily, from ONE list.

``harness._EXPORTS`` is that list; ``harness/__init__.pyi`` (what type checkers read) is
generated from it. After adding a name, regenerate the stub:
``python tests/main/test_public_api.py --write``.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":  # run as a script: this checkout's harness, not an installed one
    sys.path.insert(0, str(ROOT))

import harness  # noqa: E402

STUB = ROOT / "harness" / "__init__.pyi"


def _isort_key(name: str, *, fold: bool = False) -> tuple[int, str]:
    """ruff's order: CONSTANTS, then Classes, then the rest; alphabetical within each (in
    import lists ignoring case, in ``__all__`` not)."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name.lower() if fold else name)


def render_stub() -> str:
    """The stub for ``harness/__init__.py``: one ``import X as X`` per ``_EXPORTS`` entry,
    in the order ruff keeps (so the generated file is lint-clean as it is)."""
    imports = [("harness._version", "__version__")]
    for name, module in harness._EXPORTS.items():
        imports.append(("harness", name) if module == f"harness.{name}" else (module, name))
    imports.sort(key=lambda item: (item[0], _isort_key(item[1], fold=True)))
    lines = [
        f'"""Generated from harness._EXPORTS by {Path(__file__).name} --write: do not edit."""'
    ]
    lines.append("")
    lines.extend(f"from {module} import {name} as {name}" for module, name in imports)
    lines.append("")
    lines.append("__all__ = [")
    lines.extend(f'    "{name}",' for name in sorted(harness.__all__, key=_isort_key))
    lines.append("]")
    return "\n".join(lines) + "\n"


def test_the_stub_is_generated_from_the_one_list() -> None:
    assert STUB.read_text(encoding="utf-8") == render_stub(), (
        "harness/__init__.pyi is stale: run python tests/main/test_public_api.py --write"
    )


def test_every_public_name_resolves_to_its_defining_object() -> None:
    for name in harness._EXPORTS:
        value = getattr(harness, name)
        module = importlib.import_module(harness._EXPORTS[name])
        expected = module if harness._EXPORTS[name] == f"harness.{name}" else getattr(module, name)
        assert value is expected, name
    assert set(harness.__all__) <= set(dir(harness))
    assert set(harness.__all__) == {*harness._EXPORTS, "__version__"}


def test_contract_names_are_importable_from_the_top_level() -> None:
    contract = {
        "Tokenizer", "ApproximateTokenizer", "TiktokenTokenizer", "LAYERS", "Strategy",
        "DEFAULT_STRATEGIES", "DEFAULT_BUDGETS", "Unit", "assemble", "LayerReport",
        "AssembledPrompt", "PHASES", "Halt", "Hooks", "HookOutcome", "InstructionSource",
        "InstructionSet", "InstructionFiles", "InstructionStoreError", "Harness",
        "HarnessConfig", "UnknownAgent", "load_config", "debug", "HarnessError", "__version__",
    }  # fmt: skip
    assert contract <= set(harness.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        harness.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018


def test_importing_harness_imports_none_of_its_parts() -> None:
    code = "import sys, harness; print(sorted(m for m in sys.modules if 'harness.' in m))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['harness._version']"


def test_a_type_checker_sees_the_real_types(tmp_path: Path) -> None:
    """mypy --strict on a user's file: names from ``harness`` are real types, not ``Any``."""
    user = tmp_path / "user.py"
    user.write_text(
        textwrap.dedent(
            """
            from harness import Harness, HarnessError, UnknownAgent, __version__

            version: str = __version__
            error: HarnessError = UnknownAgent("x", ())
            wrong: int = Harness  # must be reported: Harness is a class, not Any
            """
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "MYPYPATH": str(ROOT)}  # this checkout, not an installed copy
    result = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
            "--cache-dir", str(tmp_path / "cache"), str(user),
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, result.stdout + result.stderr
    assert 'type "type[Harness]"' in lines[0] and "user.py:6" in lines[0], lines


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    STUB.write_text(render_stub(), encoding="utf-8")
    print(f"wrote {STUB}")
