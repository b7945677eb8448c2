"""The top-level package re-exports exactly the public API, lazily, from ONE list.

``harness._EXPORTS`` is that list; ``harness/__init__.pyi`` (what type checkers read) is
generated from it. After adding a name, regenerate the stub:
``python tests/harness_facade/test_public_api.py --write``.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
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
        "harness/__init__.pyi is stale: run python tests/harness_facade/test_public_api.py --write"
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
        "BudgetError", "HarnessNotRunning", "ChildSpec", "InstructionStore", "ManifestStore",
        "ManifestStoreError", "ManifestNotFound", "ManifestDiff", "Replay",
        "TargetOutsideWorkspace",
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
    """mypy --strict on a user's file: names from ``harness`` are real types, not ``Any``,
    and the build keywords (one ``BuildOptions`` for every build call) are still checked:
    a misspelt keyword or a wrong type is reported, the right ones are not."""
    user = tmp_path / "user.py"
    user.write_text(
        textwrap.dedent(
            """
            from harness import BuildOptions, Harness, HarnessError, UnknownAgent, __version__
            from harness import debug

            version: str = __version__
            error: HarnessError = UnknownAgent("x", ())
            wrong: int = Harness  # must be reported: Harness is a class, not Any

            async def use(h: Harness) -> None:
                await h.build_prompt("w", agent="a", project_id="p", targets=["x"], budgets={})
                await h.build_prompt("w", agent="a", projectid="p")
                await h.build("w", agent="a", budgets=3)
                debug.print("w", agent="a", database="x.db", file=None, tokenizer="approximate")
                debug.print("w", agent="a", databse="x.db")
                await debug.aprint("w", agent="a", file="out.txt")
                options: BuildOptions = {"task_state": "goal"}
                await h.build_prompt("w", agent="a", **options)
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
    lines = [line for line in result.stdout.splitlines() if ": error:" in line]
    reported = {int(line.split(":")[1]) for line in lines}
    assert reported == {7, 11, 12, 14, 15}, result.stdout + result.stderr
    assert any('type "type[Harness]"' in line and "user.py:7" in line for line in lines)
    assert any('"projectid"' in line for line in lines), lines
    assert any('"databse"' in line for line in lines), lines


async def test_a_wrong_build_keyword_is_refused_at_run_time_too() -> None:
    """``**options`` accept anything at run time: the build calls refuse what their
    ``TypedDict`` does not list, as a plain signature would (a ``TypeError``)."""
    from harness.errors import HarnessError

    with anyio.fail_after(10):
        with pytest.raises(TypeError, match="projectid") as caught:
            await harness.Harness(harness.HarnessConfig()).build_prompt(
                "examples/acme",
                agent="reviewer",
                projectid="acme",  # type: ignore[call-arg]
            )
        assert isinstance(caught.value, HarnessError)
        with pytest.raises(TypeError, match="databse"):
            await harness.debug.aprint(
                "examples/acme",
                agent="reviewer",
                databse="x",  # type: ignore[call-arg]
            )


def test_the_license_file_matches_the_declared_license() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text()


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    STUB.write_text(render_stub(), encoding="utf-8")
    print(f"wrote {STUB}")
