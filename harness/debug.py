"""Debug print: see exactly what a prompt holds, what was cut, and why, in 80 columns.

At a plain REPL (no event loop needed)::

    >>> import harness
    >>> prompt = harness.debug.print("examples/acme", agent="reviewer", project_id="acme",
    ...                              database="examples/acme.db", targets=["web/app.ts"])
    harness debug: agent reviewer, project acme
    ...
    >>> prompt.layer("instruction_files").kept
    ('AGENTS.md', 'web/AGENTS.md', 'db:acme/reviewer')

A function callable from the REPL, rather than a task runner. ``print`` is synchronous for a
plain REPL; ``aprint`` is the same for code already inside an event loop.

Called inside a running event loop (a notebook, ``python -m asyncio``), ``print`` still
works: it runs the job on a fresh event loop in a worker thread, blocking the caller until it
is done, and emits a ``RuntimeWarning`` saying to use ``await harness.debug.aprint(...)``
there instead, because blocking a loop that serves other tasks is rarely what you want.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import textwrap
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TextIO, Unpack, cast

import anyio

from harness._harness import Harness
from harness.build import BuildOptions, PromptBuild, check_options
from harness.config import HarnessConfig
from harness.prompt_assembler import AssembledPrompt, LayerReport
from harness.workspace import display_path, printable, visible

__all__ = ["DebugOptions", "aprint", "format_build", "print", "scope_line"]

WIDTH = 80


def _n(value: int, estimated: bool) -> str:
    return f"{'~' if estimated else ''}{value:,}"


def scope_line(targets: tuple[str, ...], chain: tuple[str, ...]) -> str:
    """``scoped to 1 target: 4 directories on its chain`` (plurals right)."""
    many = len(targets) != 1
    target = f"{len(targets)} target{'s' if many else ''}"
    dirs = f"{len(chain)} director{'ies' if len(chain) != 1 else 'y'}"
    return f"scoped to {target}: {dirs} on {'their chains' if many else 'its chain'}"


def _scope_lines(build: PromptBuild, width: int) -> list[str]:
    """The header's scope and targets lines; none for a build of the whole workspace."""
    if not build.targets:
        return []
    paths = [display_path(target) for target in build.targets]
    scope = f"scope      {scope_line(build.targets, build.chain)}"
    return [scope, *_wrap("targets", paths, width, indent="")]


def _wrap(
    label: str, items: list[str] | tuple[str, ...], width: int, indent: str = "    "
) -> list[str]:
    """``label`` then comma-separated items, wrapped under themselves."""
    head = f"{indent}{label:<8} " if indent else f"{label:<10} "
    return textwrap.wrap(
        ", ".join(items),
        width=width,
        initial_indent=head,
        subsequent_indent=" " * len(head),
        break_long_words=False,
        break_on_hyphens=False,
    )


def format_build(build: PromptBuild, *, width: int = WIDTH) -> str:
    """Render a ``PromptBuild`` as the debug report (pure: returns the text)."""
    prompt = build.prompt
    rule = "-" * width
    project = f", project {build.project_id}" if build.project_id else ", no project"
    legend = "~ marks estimated counts" if prompt.estimated else "exact counts"
    lines = [
        printable(f"harness debug: agent {build.agent}{project}"),
        printable(f"workspace  {build.workspace}"),
        *_scope_lines(build, width),
        f"tokenizer  {build.tokenizer_name} ({legend})",
        "",
        f"{'layer':<18} {'strategy':<17} {'tokens / budget':>17} {'kept':>5} {'dropped':>8}",
        rule,
    ]
    for report in prompt.layers:
        lines.extend(_layer_lines(report, width))
    lines.append(rule)
    lines.extend(_envelope_lines(build))
    lines.extend(_context_lines(build))
    lines.append("")
    lines.extend(_warning_lines(build.warnings, width))
    lines.append("")
    lines.extend(_prompt_lines(prompt, width))
    return "\n".join(lines) + "\n"


def _layer_lines(report: LayerReport, width: int) -> list[str]:
    """One layer's row, then what it kept and dropped, and why."""
    tokens = f"{_n(report.tokens, report.estimated)} / {report.budget:,}"
    row = (
        f"{report.name:<18} {report.strategy!s:<17} {tokens:>17} "
        f"{len(report.kept):>5} {len(report.dropped):>8}"
    )
    lines = [row + "  cut" if report.truncated else row]
    if report.kept:
        kept = list(report.kept)
        if report.truncated:
            kept[-1] += " (truncated)"
        lines.extend(_wrap("kept", [visible(item)[0] for item in kept], width))
    if report.dropped:
        lines.extend(_wrap("dropped", [visible(item)[0] for item in report.dropped], width))
    for note in report.notes:  # why anything was dropped or cut
        lines.extend(_wrap("why", [visible(note)[0]], width))
    return lines


def _envelope_lines(build: PromptBuild) -> list[str]:
    prompt, envelope = build.prompt, build.envelope
    room, est = envelope.input_tokens, prompt.estimated
    return [
        f"envelope   {envelope.model_context_limit:,} context - {envelope.reserved_response:,} "
        f"response - {envelope.reserved_tool_observations:,} tool obs. = {room:,} input",
        f"budgets    {sum(build.budgets.values()):,} of {room:,} (slack {build.slack:,})",
        f"prompt     {_n(prompt.tokens, est)} of {room:,} (headroom {_n(build.headroom, est)})",
    ]


def _context_lines(build: PromptBuild) -> list[str]:
    """Each loan of unused tokens (allocation="ceilings"), the readiness when judged, and each
    unit removed before assembly (denied, outranked, duplicate)."""
    lines = [
        f"loan       {lender} -> {borrower}: {tokens:,} tokens"
        for lender, borrower, tokens in build.prompt.loans
    ]
    if build.readiness is not None:
        lines.extend(visible(line)[0] for line in build.readiness.explain().splitlines())
    request = build.prompt.manifest().get("request") or {}
    for item in request.get("excluded", ()):  # removed before assembly, each with its reason
        of = f" of {item['of']}" if item.get("of") else ""
        of += f" by {item['by']}" if item.get("by") else ""
        where = f"{item['id']} ({item['layer']})"
        line = f"removed    {visible(where)[0]}: {item['reason']}{visible(of)[0]}"
        lines.extend(textwrap.wrap(line, width=WIDTH, subsequent_indent=" " * 11))
    return lines


def _warning_lines(warnings: Sequence[str], width: int) -> list[str]:
    if not warnings:
        return ["warnings   none"]
    lines = [f"warnings ({len(warnings)})"]
    for warning in warnings:
        lines.extend(
            textwrap.wrap(
                visible(warning)[0],
                width=width,
                initial_indent="  ! ",
                subsequent_indent="    ",
                break_long_words=False,
            )
        )
    return lines


def _prompt_lines(prompt: AssembledPrompt, width: int) -> list[str]:
    title = f"-- prompt: {_n(prompt.tokens, prompt.estimated)} tokens, sha256 {prompt.digest[:16]} "
    shown, controls = visible(prompt.text)
    lines = [title + "-" * max(0, width - len(title)), shown, "-" * width]
    if controls:
        lines.append(
            f"({controls} control character(s) in the prompt are shown as \\xNN or \\uNNNN "
            "above; the digest is of the prompt as the model gets it)"
        )
    return lines


class DebugOptions(BuildOptions, total=False):
    """The optional keywords of ``print`` / ``aprint``: a build's (``BuildOptions``) plus
    where the rows come from (``database``), where the report goes (``file``, default
    stdout) and the configuration (``config``, default ``load_config()``)."""

    database: str | os.PathLike[str] | None
    file: TextIO | None
    config: HarnessConfig | None


async def aprint(
    workspace: str | os.PathLike[str], *, agent: str, **options: Unpack[DebugOptions]
) -> AssembledPrompt:
    """Build the prompt and print the debug report to ``file`` (default: stdout); with
    ``targets``, scoped to the instruction files on their chains (the header says so).

    Starts a short-lived ``Harness``; returns the ``AssembledPrompt`` so the REPL can keep
    inspecting it (``.manifest()``, ``.layers``).
    """
    check_options(options, DebugOptions.__optional_keys__, "aprint")
    keys = BuildOptions.__optional_keys__
    build_options = cast(BuildOptions, {k: v for k, v in options.items() if k in keys})
    database = options.get("database")
    async with Harness(options.get("config"), database=database, watch_store=False) as harness:
        build = await harness.build(workspace, agent=agent, **build_options)
    file = options.get("file")
    out = file if file is not None else sys.stdout
    out.write(format_build(build))
    out.flush()
    return build.prompt


def print(
    workspace: str | os.PathLike[str], *, agent: str, **options: Unpack[DebugOptions]
) -> AssembledPrompt:
    """Synchronous ``aprint`` for a plain REPL or script (no event loop needed).

    Inside a running event loop it runs in a worker thread (blocking the loop until done)
    and warns to use ``await harness.debug.aprint(...)`` instead.
    """
    check_options(options, DebugOptions.__optional_keys__, "print")
    job = functools.partial(aprint, workspace, agent=agent, **options)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(job)
    warnings.warn(
        "harness.debug.print() was called inside a running event loop: it ran in a worker "
        "thread and blocked the loop until done; use `await harness.debug.aprint(...)` there",
        RuntimeWarning,
        stacklevel=2,
    )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-debug") as pool:
        return pool.submit(anyio.run, job).result()
