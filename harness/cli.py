"""The command line: ``python -m harness`` / ``harness`` with ``debug`` and ``sources``.

Bad input (a missing workspace, an unknown agent, a malformed budget, an unreadable file or
database, a bad config) exits with status 2 and ONE line on stderr, never a traceback: the
person at the terminal needs the fix, not our stack. tiktoken is imported only when
``--tokenizer tiktoken:...`` asks for it.

``--rules FILE`` and ``--task-state FILE`` fill the caller-provided layers, in discard order
(oldest first). A ``.jsonl`` file holds one JSON value per line: a string (the unit's text)
or an object ``{"text": ..., "id": ..., "source": ...}`` where only ``text`` is required. Any
other file holds one unit per line; blank lines and lines starting with ``#`` are skipped.
A unit without an explicit id is named ``FILENAME:LINE``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from harness.config import HarnessConfig
    from harness.harness import PromptBuild
    from harness.instruction_files import InstructionSet
    from harness.project_context import ProjectContext
    from harness.prompt_assembler import Unit

__all__ = ["main"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input from the command line: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse prints the usage block too; one line is the contract.
        raise UsageError(message)


def _budget(text: str) -> tuple[str, int]:
    from harness.prompt_assembler import BudgetError, merge_budgets

    layer, sep, number = text.partition("=")
    layer = layer.strip()
    if not sep or not layer:
        raise UsageError(f"--budget {text!r}: expected LAYER=N, e.g. instruction_files=500")
    try:
        value = int(number.strip())
    except ValueError:
        raise UsageError(f"--budget {text!r}: {number.strip()!r} is not a whole number") from None
    try:
        merge_budgets({layer: value}, {})
    except BudgetError as exc:
        raise UsageError(f"--budget {text!r}: {exc}") from None
    return layer, value


def _budgets(items: Sequence[str]) -> dict[str, int]:
    budgets: dict[str, int] = {}
    for item in items:
        layer, value = _budget(item)
        if layer in budgets:
            raise UsageError(
                f"--budget {item!r}: {layer} already has a budget ({budgets[layer]}); give each "
                "layer once"
            )
        budgets[layer] = value
    return budgets


def _build_parser() -> _Parser:
    parser = _Parser(
        prog="harness",
        description="Inspect the context an agent gets: instruction files, prompt layers, budgets.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def common(sub: argparse.ArgumentParser, *, agent_required: bool) -> None:
        sub.add_argument("workspace", metavar="WORKSPACE", help="the workspace directory")
        sub.add_argument("--agent", required=agent_required, metavar="SLUG", help="agent slug")
        sub.add_argument("--project-id", metavar="ID", help="project id for the database row")
        sub.add_argument("--db", metavar="PATH", help="SQLite file holding agent_instructions")
        sub.add_argument("--config", metavar="PATH", help="harness TOML config file")

    debug = commands.add_parser(
        "debug",
        help="print the layer report and the assembled prompt",
        description=(
            "Build the prompt AGENT gets in WORKSPACE and print the per-layer report, the "
            "envelope, every warning and the prompt (--json: the manifest instead). "
            "--rules/--task-state FILE: one unit per line, oldest first (blank and # lines "
            "skipped, ids FILE:LINE), or in a .jsonl file one JSON string or "
            '{"text", "id", "source"} object per line. Bad input exits 2 with one line on stderr.'
        ),
    )
    common(debug, agent_required=True)
    debug.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="LAYER=N",
        help="override one layer's token budget (repeat for more layers)",
    )
    debug.add_argument(
        "--tokenizer",
        metavar="SPEC",
        help="approximate | tiktoken:NAME_OR_PATH (default: from the config)",
    )
    debug.add_argument("--json", action="store_true", help="print the manifest as JSON")
    debug.add_argument("--rules", metavar="FILE", help="business rules, one unit per line")
    debug.add_argument("--task-state", metavar="FILE", help="task state, one unit per line")

    sources = commands.add_parser(
        "sources", help="list the discovered instruction files in precedence order"
    )
    common(sources, agent_required=False)
    return parser


def _read_units(path: str, option: str) -> list[Unit]:
    from harness.prompt_assembler import Unit

    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{option} {path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot be read ({exc.strerror})") from None
    text = raw.decode("utf-8-sig", errors="replace")
    units: list[Unit] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        default_id = f"{file.name}:{number}"
        if file.suffix == ".jsonl":
            if not stripped:
                continue
            try:
                value: Any = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{option} {path}:{number}: not JSON ({exc.msg})") from None
            if isinstance(value, str):
                value = {"text": value}
            if not isinstance(value, dict) or not isinstance(value.get("text"), str):
                raise UsageError(f"{option} {path}:{number}: expected a string or {{'text': ...}}")
            unit_id, source = value.get("id", default_id), value.get("source")
            if not isinstance(unit_id, str) or not (source is None or isinstance(source, str)):
                raise UsageError(f"{option} {path}:{number}: 'id' and 'source' must be strings")
            for name, field in (("text", value["text"]), ("id", unit_id), ("source", source)):
                if field is not None and not _encodable(field):
                    raise UsageError(
                        f"{option} {path}:{number}: {name!r} holds an unpaired surrogate escape "
                        "(such as \\ud800); write valid Unicode"
                    )
            unit = Unit(id=unit_id, text=value["text"], source=source)
        else:
            if not stripped or stripped.startswith("#"):
                continue
            unit = Unit(id=default_id, text=stripped)
        if unit.id in seen:
            raise UsageError(f"{option} {path}:{number}: duplicate id {unit.id!r}")
        seen.add(unit.id)
        units.append(unit)
    return units


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_paths(args: argparse.Namespace) -> None:
    if not args.workspace:
        raise UsageError("workspace is empty: give a directory (. for the current one)")
    workspace = Path(args.workspace)
    if not workspace.exists():
        raise UsageError(f"workspace {args.workspace!r} does not exist")
    if not workspace.is_dir():
        raise UsageError(f"workspace {args.workspace!r} is not a directory")
    if args.db is not None and not Path(args.db).is_file():
        if not Path(args.db).exists():
            raise UsageError(f"--db {args.db!r}: no such database file")
        raise UsageError(f"--db {args.db!r}: not a database file (not a regular file)")
    if args.project_id is not None and args.agent is None:
        raise UsageError("--project-id needs --agent: the database row is per agent")


async def _debug(args: argparse.Namespace) -> int:
    from harness.debug import format_build
    from harness.harness import Harness
    from harness.prompt_assembler import BudgetError

    budgets = _budgets(args.budget)
    rules = _read_units(args.rules, "--rules") if args.rules else []
    state = _read_units(args.task_state, "--task-state") if args.task_state else []
    harness = Harness(_config(args), database=args.db)
    harness.roster.identity(args.agent)
    try:
        harness.effective_budgets(budgets)  # the config file's envelope rule, per call too
    except BudgetError as exc:
        raise UsageError(f"--budget: {exc}") from None
    async with harness:
        build: PromptBuild = await harness.build(
            args.workspace,
            agent=args.agent,
            project_id=args.project_id,
            business_rules=rules,
            task_state=state,
            budgets=budgets,
            tokenizer=args.tokenizer,
        )
    if args.json:
        for warning in build.warnings:
            sys.stderr.write(f"harness: warning: {warning}\n")
        sys.stdout.write(json.dumps(build.prompt.manifest(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_build(build))
    return EXIT_OK


def _format_sources(
    instruction_set: InstructionSet, context: ProjectContext, args: argparse.Namespace
) -> str:
    from harness.instruction_files.discovery import printable

    who = f"agent {args.agent}" if args.agent else "no agent"
    project = f", project {args.project_id}" if args.project_id else ", no project"
    header = f"instruction files in {args.workspace} ({who}{project}), least authoritative first:"
    lines = [printable(header)]
    if not instruction_set.sources:
        lines.append("  (none)")
    for index, source in enumerate(instruction_set.sources, start=1):
        size = len(source.content.encode("utf-8"))
        lines.append(
            f"  {index:>2}  {source.kind:<9}  {source.path:<40} {size:>7,} B  {source.digest[:8]}"
        )
    lines.append("")
    lines.append("project context (.AGENTS/), in layer order:")
    if not context.units:
        lines.append("  (none)")
    for index, unit in enumerate(context.units, start=1):
        lines.append(f"  {index:>2}  {unit.id:<51} {len(unit.text.encode('utf-8')):>7,} B")
    warnings = [*instruction_set.warnings, *context.warnings]
    lines.append("")
    lines.append(f"warnings ({len(warnings)})" if warnings else "warnings   none")
    lines.extend(f"  ! {warning}" for warning in warnings)
    return "\n".join(lines) + "\n"


async def _sources(args: argparse.Namespace) -> int:
    from harness.harness import Harness

    harness = Harness(_config(args), database=args.db)
    agent = args.agent
    if agent is not None:
        harness.roster.identity(agent)
    async with harness:
        instruction_set = await harness.instruction_files.load(
            args.workspace, agent=agent or "-", project_id=args.project_id
        )
    context = await harness.project_context(args.workspace)
    sys.stdout.write(_format_sources(instruction_set, context, args))
    return EXIT_OK


def _config(args: argparse.Namespace) -> HarnessConfig:
    from harness.config import load_config

    return load_config(args.config)


def _usage_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean bad input (status 2), imported only once they may occur. Anything
    else is our bug, reported as an internal error (status 1), never passed off as the user's."""
    from harness.agents import UnknownAgent
    from harness.config import ConfigError
    from harness.instruction_files import InstructionStoreError
    from harness.tokenizer import TokenizerLoadError

    return (
        UsageError,
        UnknownAgent,
        ConfigError,
        InstructionStoreError,
        TokenizerLoadError,
        FileNotFoundError,  # WorkspaceNotFoundError included
        PermissionError,
        NotADirectoryError,
    )


def _leaf(exc: BaseException) -> BaseException:
    """The single cause inside nested exception groups (task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``harness`` and ``python -m harness``; returns the exit status."""
    try:
        args = _build_parser().parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"harness: error: {_one_line(exc)}\n")
        return EXIT_USAGE
    try:
        import anyio

        _check_paths(args)
        command = _debug if args.command == "debug" else _sources
        return anyio.run(command, args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        cause = _leaf(exc)
        if isinstance(cause, _usage_errors()):
            sys.stderr.write(f"harness: error: {_one_line(cause)}\n")
            return EXIT_USAGE
        sys.stderr.write(f"harness: internal error: {type(cause).__name__}: {_one_line(cause)}\n")
        return EXIT_FAILURE
