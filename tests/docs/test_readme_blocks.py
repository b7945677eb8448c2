"""The code blocks of the README and of ``docs/`` run as written and show what they say.

Every ``python`` block of ``README.md`` and ``docs/**/*.md`` runs (one namespace per page, in
order, as a reader pasting them one after the other would), unless the line before it is a
``<!-- not run: REASON -->`` marker. A block of ``>>>`` lines runs as a doctest. Placeholder
paths (``/path/to/...``, ``path/to/repo``, ``/srv/checkouts/acme``, ``app.db``,
``engine.db``) are real copies of the shipped example; nothing else in a block is changed.
The tests after the generic one check what particular blocks print: the quick start's output
as shown, both hook examples, ``InstructionFiles``, the runtime, embedding, the REPL
transcript and the command-line synopsis
(``tests/prompt_assembler/test_readme_example.py`` covers the ``assemble()`` example).
"""

from __future__ import annotations

import ast
import doctest
import hashlib
import re
import shlex
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness import Harness, HarnessConfig, Unit
from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ACME = ROOT / "examples" / "acme"
ACME_DB = ROOT / "examples" / "acme.db"
NOT_RUN = re.compile(r"<!-- not run: .+ -->")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language (the info string's first word), its code, and whether
    the line before it marks it not to be run."""

    lang: str
    code: str
    heading: str
    marked: bool


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def fenced(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order, each with the ``## `` heading it is under."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    heading, start, info = "", -1, ""
    for number, line in enumerate(lines):
        if start < 0 and line.startswith("## "):
            heading = line.rstrip("\n")
        elif start < 0 and line.startswith("```"):
            start, info = number, line[3:].strip()
        elif start >= 0 and line.startswith("```"):
            marked = start > 0 and bool(NOT_RUN.fullmatch(lines[start - 1].strip()))
            lang = info.split()[0] if info else ""
            found.append(Block(lang, "".join(lines[start + 1 : number]), heading, marked))
            start = -1
    return found


def blocks(page: str, lang: str, heading: str | None = None) -> list[str]:
    """The ``lang`` blocks of ``README.md`` or ``docs/PAGE``, optionally of one section."""
    path = README if page == "README.md" else DOCS / page
    return [
        block.code
        for block in fenced(path)
        if block.lang == lang and (heading is None or block.heading == heading)
    ]


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


#: Placeholder -> the real copy under the sandbox (``tmp_path``) the blocks run in.
PLACEHOLDERS = {"/srv/checkouts/acme": "checkouts/acme"}


def sandbox(tmp_path: Path) -> None:
    """The files the blocks name, as copies: the example (also as ``path/to/repo`` and the
    checkout), and its database (also as ``app.db`` and ``engine.db``)."""
    for place in ("examples/acme", "path/to/repo", "checkouts/acme"):
        shutil.copytree(ACME, tmp_path / place)
    for name in ("examples/acme.db", "app.db", "engine.db"):
        shutil.copyfile(ACME_DB, tmp_path / name)


def runnable(page: Path) -> list[Block]:
    return [block for block in fenced(page) if block.lang == "python" and not block.marked]


def run_doctest(code: str, namespace: dict[str, Any], name: str) -> None:
    test = doctest.DocTestParser().get_doctest(code, namespace, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    results = runner.run(test, out=report.append, clear_globs=False)
    assert results.failed == 0, "".join(report)


def run_block(code: str, namespace: dict[str, Any], name: str) -> None:
    """Run one block: a doctest, a script ending in ``anyio.run(main)`` (``main`` bounded
    here), or code with top-level ``await`` (bounded too)."""
    if code.lstrip().startswith(">>> "):
        run_doctest(code, namespace, name)
        return
    if code.rstrip().endswith("\nanyio.run(main)"):
        exec(compile(without_final_run(code), name, "exec"), namespace)
        main: Callable[[], Awaitable[None]] = namespace["main"]
        bounded = main
    else:
        compiled = compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

        async def bounded() -> None:
            pending = eval(compiled, namespace)
            if pending is not None:
                await pending

    async def within_limit() -> None:
        with anyio.fail_after(30):
            await bounded()

    anyio.run(within_limit)


@pytest.mark.parametrize(
    "page",
    [page for page in pages() if runnable(page)],
    ids=lambda page: str(page.relative_to(ROOT)),
)
def test_every_python_block_runs(
    page: Path, tmp_path: Path, cl100k_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's python blocks, in order, in one namespace, in a sandbox of copies."""
    sandbox(tmp_path)
    monkeypatch.chdir(tmp_path)
    replacements = {**PLACEHOLDERS, "/path/to/cl100k_base.tiktoken": str(cl100k_file)}
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem}"}
    for number, block in enumerate(runnable(page), start=1):
        code = block.code
        for placeholder, real in replacements.items():
            code = code.replace(placeholder, real)
        run_block(code, namespace, f"{page.relative_to(ROOT)} block {number}")


def test_blocks_not_run_say_why() -> None:
    """A marker names its reason, and only python blocks need one (the others never run)."""
    marked = [block for page in pages() for block in fenced(page) if block.marked]
    assert marked, "the marker is never used: the parser may have stopped seeing it"
    assert {block.lang for block in marked} == {"python"}


def readme_debug_argv() -> list[str]:
    """The arguments after ``python -m harness`` in the README's one-line quick start."""
    [command] = [
        line[line.index("python -m harness debug") :]
        for line in blocks("README.md", "sh", "## Quick start (fresh machine)")
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
    [shown] = blocks("README.md", "text", "## Quick start (fresh machine)")
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
    [_, exact] = blocks("assembly.md", "python")
    code = replace(exact, '"/path/to/cl100k_base.tiktoken"', repr(str(cl100k_file)))
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # the block asserts estimated is False
    assert namespace["exact"].name.endswith("cl100k_base")
    assert namespace["prompt"].text == "You are the release agent."


async def test_hook_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    """The two hook examples, in one namespace as the second continues the first."""
    halt, rewrite = blocks("hooks.md", "python")
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
    [code] = blocks("instruction-files.md", "python", "")  # the one above every heading
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
    [code] = blocks("runtime-basics.md", "python")
    namespace: dict[str, Any] = {"__name__": "readme_runtime"}
    exec(compile(without_final_run(code), "README.md", "exec"), namespace)
    with anyio.fail_after(5):
        await namespace["main"]()


async def test_embedding_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the example as the checkout and its database as ``engine.db``: the block prints
    the prompt's token count and digest, and that prompt holds every layer it passed."""
    [code] = blocks("README.md", "python", "## Embedding in an engine")
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
    [transcript] = blocks("cli.md", "python")
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
    [transcript] = blocks("cli.md", "python")
    test = doctest.DocTestParser().get_doctest(transcript, {}, "docs/cli.md", None, 0)
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
    [synopsis] = blocks("cli.md", "text")
    entry = synopsis[synopsis.index(f"harness {command} ") :]
    following = re.search(r"\nharness ", entry)
    entry = entry[: following.start()] if following else entry
    with pytest.raises(SystemExit) as exited:
        cli_main([command, "--help"])
    assert exited.value.code == 0
    assert options(entry) == options(capsys.readouterr().out)
