"""The README's other code blocks run as written and show what the README says they show.

``tests/core/test_readme_example.py`` covers the ``assemble()`` example and
``tests/main/test_example.py`` the quick-start command's layers. This file covers the rest:
the quick-start output as printed in the README, the exact tokenizer, both hook examples
(top-level ``await``, as in ``python -m asyncio``), ``InstructionFiles``, the runtime,
embedding, the REPL transcript and the command-line synopsis. Placeholder paths
(``/path/to/...``, ``path/to/repo``, ``/srv/checkouts/acme``, ``app.db``, ``engine.db``) are
replaced by real copies of the shipped example; nothing else in a block is changed.
"""

from __future__ import annotations

import ast
import doctest
import hashlib
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness import Harness, HarnessConfig, Unit
from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ACME = ROOT / "examples" / "acme"
ACME_DB = ROOT / "examples" / "acme.db"


def section(title: str) -> str:
    """The README text from the heading ``title`` to the next ``## `` heading (headings
    inside fenced blocks, such as a prompt's markdown, do not count)."""
    lines = README.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index(f"{title}\n")
    fenced = False
    for end in range(start + 1, len(lines)):
        if lines[end].startswith("```"):
            fenced = not fenced
        elif not fenced and lines[end].startswith("## "):
            return "".join(lines[start:end])
    return "".join(lines[start:])


def blocks(title: str, lang: str) -> list[str]:
    """The fenced ``lang`` blocks of a README section, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", section(title), re.S)


def replace(code: str, placeholder: str, real: str) -> str:
    """``code`` with ``placeholder`` replaced; fails if the README no longer has it."""
    assert placeholder in code, f"README block no longer contains {placeholder!r}"
    return code.replace(placeholder, real)


def without_final_run(code: str) -> str:
    """Drop the block's closing ``anyio.run(main)`` so the test can bound ``main`` itself."""
    lines = code.rstrip("\n").splitlines()
    assert lines[-1] == "anyio.run(main)", lines[-1]
    return "\n".join(lines[:-1]) + "\n"


async def run_with_top_level_await(code: str, namespace: dict[str, Any]) -> None:
    """Run a block the way ``python -m asyncio`` or a notebook does (top-level ``await``)."""
    compiled = compile(code, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    pending = eval(compiled, namespace)
    if pending is not None:
        await pending


def readme_debug_argv() -> list[str]:
    """The arguments after ``python -m harness`` in the README's one-line quick start."""
    [command] = [
        line[line.index("python -m harness debug") :]
        for line in blocks("## Quick start (fresh machine)", "sh")
        for line in [line.strip()]
        if "python -m harness debug" in line
    ]
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "harness"]
    return argv[3:]


def test_quick_start_prints_the_output_shown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every line the README shows, up to its ``[... the rest of the prompt ...]``, is what
    the command prints; only the workspace's absolute path differs."""
    [shown] = blocks("## Quick start (fresh machine)", "text")
    shown_lines = shown.splitlines()
    cut = shown_lines.index("[... the rest of the prompt ...]")
    monkeypatch.chdir(ROOT)
    assert cli_main(readme_debug_argv()) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) > cut
    for number, (want, got) in enumerate(zip(shown_lines[:cut], printed, strict=False)):
        if want.startswith("workspace  "):
            assert got == f"workspace  {ACME}", got
        else:
            assert got == want, f"README output line {number + 1}"


def test_exact_tokenizer_block(cl100k_file: Path) -> None:
    [_, exact] = blocks("## Prompt assembly", "python")
    code = replace(exact, '"/path/to/cl100k_base.tiktoken"', repr(str(cl100k_file)))
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # the block asserts estimated is False
    assert namespace["exact"].name.endswith("cl100k_base")
    assert namespace["prompt"].text == "You are the release agent."


async def test_hook_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    """The two hook examples, in one namespace as the second continues the first."""
    halt, rewrite = blocks("## Hooks for hook authors", "python")
    namespace: dict[str, Any] = {}
    with anyio.fail_after(5):
        await run_with_top_level_await(halt, namespace)
        assert capsys.readouterr().out == "rm -rf is not allowed; delete specific paths instead\n"
        await run_with_top_level_await(rewrite, namespace)
    outcome = namespace["outcome"]
    assert outcome.payload["tool_input"]["command"] == "make deploy DRY_RUN=1"
    assert not outcome.halted
    assert outcome.ran == ("no_rm_rf", "dry_run_deploys")


async def test_instruction_files_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``path/to/repo`` a copy of the example and ``app.db`` its database: the sources
    print in ascending precedence with their depth and digest, and there are no warnings."""
    [code] = blocks("## Instruction files", "python")
    repo = tmp_path / "path" / "to" / "repo"
    shutil.copytree(ACME, repo)
    shutil.copyfile(ACME_DB, tmp_path / "app.db")
    monkeypatch.chdir(tmp_path)
    with anyio.fail_after(10):
        await run_with_top_level_await(code, {})
    files = [
        ("root", "AGENTS.md", 0),
        ("directory", "web/AGENTS.md", 1),
        ("directory", "services/billing/AGENTS.md", 2),
        ("directory", "services/billing/api/AGENTS.override.md", 3),
    ]
    expected = [
        f"{kind} {path} {depth} {hashlib.sha256((repo / path).read_bytes()).hexdigest()[:12]}"
        for kind, path, depth in files
    ]
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == expected
    assert re.fullmatch(r"database db:acme/reviewer 0 [0-9a-f]{12}", lines[4]), lines[4]
    assert lines[5:] == ["()"]


async def test_runtime_block() -> None:
    """The block's own ``assert await counter.call("get") == 2`` holds, and it stops."""
    [code] = blocks("## Runtime", "python")
    namespace: dict[str, Any] = {"__name__": "readme_runtime"}
    exec(compile(without_final_run(code), "README.md", "exec"), namespace)
    with anyio.fail_after(5):
        await namespace["main"]()


async def test_embedding_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the example as the checkout and its database as ``engine.db``: the block prints
    the prompt's token count and digest, and that prompt holds every layer it passed."""
    [code] = blocks("## Embedding in an engine", "python")
    checkout = tmp_path / "checkouts" / "acme"
    shutil.copytree(ACME, checkout)
    shutil.copyfile(ACME_DB, tmp_path / "engine.db")
    monkeypatch.chdir(tmp_path)
    code = replace(code, '"/srv/checkouts/acme"', repr(str(checkout)))
    namespace: dict[str, Any] = {"__name__": "readme_embedding"}
    exec(compile(without_final_run(code), "README.md", "exec"), namespace)
    with anyio.fail_after(10):
        await namespace["main"]()
        async with Harness(HarnessConfig(), database=tmp_path / "engine.db") as h:
            again = await h.build_prompt(
                checkout,
                agent="reviewer",
                project_id="acme",
                business_rules=[Unit("rule-17", "Refunds never exceed the captured amount.")],
                task_state=[Unit("goal", "Review PR #418 (partial refunds).")],
            )
    assert capsys.readouterr().out == f"{again.tokens} {again.digest}\n"
    assert "db:acme/reviewer" in again.layer("instruction_files").kept
    assert again.layer("business_rules").kept == ("rule-17",)
    assert again.layer("task_state").kept == ("goal",)


def repl_examples() -> list[doctest.Example]:
    [transcript] = blocks("## At the REPL", "python")
    return doctest.DocTestParser().get_examples(transcript)


def test_repl_transcript_values(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each value the transcript shows is the value the REPL gives."""
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {}
    shown = 0
    for example in repl_examples():
        try:
            expression = compile(example.source, "README.md", "eval")
        except SyntaxError:  # a statement: the REPL echoes no value
            exec(compile(example.source, "README.md", "exec"), namespace)
            continue
        assert repr(eval(expression, namespace)) == example.want.strip()
        shown += 1
    assert shown >= 1
    assert capsys.readouterr().out.startswith("harness debug: agent reviewer, project acme\n")


def test_repl_transcript_is_a_passing_doctest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The transcript as a doctest (``...`` in the output elides lines)."""
    monkeypatch.chdir(ROOT)
    [transcript] = blocks("## At the REPL", "python")
    test = doctest.DocTestParser().get_doctest(transcript, {}, "README At the REPL", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    results = runner.run(test, out=lambda _text: None)
    assert results.attempted >= 2
    assert results.failed == 0


def options(help_text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]*", help_text)) - {"--help"}


@pytest.mark.parametrize("command", ["debug", "sources", "manifests", "replay", "diff", "view"])
def test_command_line_synopsis_lists_exactly_the_options(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    [synopsis] = blocks("## At the REPL", "text")
    entry = synopsis[synopsis.index(f"harness {command} ") :]
    following = re.search(r"\nharness ", entry)
    entry = entry[: following.start()] if following else entry
    with pytest.raises(SystemExit) as exited:
        cli_main([command, "--help"])
    assert exited.value.code == 0
    assert options(entry) == options(capsys.readouterr().out)
