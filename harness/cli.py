"""The command line: ``python -m harness`` / ``harness`` with ``debug`` and ``sources``.

::

    harness debug examples/acme --agent reviewer --project-id acme --db examples/acme.db
    harness sources examples/acme --db postgresql://engine@db/harness   # a URL works too
    harness --version

``--db`` takes a SQLite path or a URL (its scheme picks the backend), as ``database=`` does.
Bad input (a missing workspace, an unknown agent, a malformed budget, an unreadable file or
database, a bad config: anything that is a ``HarnessError``) exits with status 2 and one line
on stderr, never a traceback.

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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from harness._version import __version__
from harness.errors import HarnessError, single_cause
from harness.stores import is_url

if TYPE_CHECKING:
    from harness._harness import PromptBuild
    from harness._project_context import ProjectContext
    from harness.config import HarnessConfig
    from harness.instruction_files import InstructionSet
    from harness.prompt_assembler import Unit

__all__ = ["main"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(HarnessError, ValueError):
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


def _target_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="PATH",
        help=(
            "a path the run will touch, relative to WORKSPACE (not to the current directory) "
            "or absolute: only the instruction files on the chain from the root to it apply "
            "(repeat for more targets)"
        ),
    )


def _debug_parser(
    commands: argparse._SubParsersAction[_Parser],
    common: Callable[..., None],
) -> argparse.ArgumentParser:
    """The ``debug`` subcommand and its options."""
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
    output = debug.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the manifest as JSON")
    output.add_argument(
        "--text",
        action="store_true",
        help="print exactly the prompt's text (for piping; warnings go to stderr)",
    )
    debug.add_argument("--rules", metavar="FILE", help="business rules, one unit per line")
    debug.add_argument("--task-state", metavar="FILE", help="task state, one unit per line")

    return debug


def _rules_parser(
    commands: argparse._SubParsersAction[_Parser], common: Callable[..., None]
) -> None:
    """The ``rules`` subcommand: every candidate rule file for the targets, and why."""
    rules = commands.add_parser(
        "rules",
        help="list every candidate rule file for the targets: applied or not, and why",
        description=(
            "For each rule file of the configured formats on the targets' chains (the whole "
            "workspace without --target), print whether it applies and a one-line reason, "
            "like git check-ignore -v. --format NAME reads those formats instead of the "
            "configured ones (repeat for more, in precedence order)."
        ),
    )
    common(rules, agent_required=False)
    rules.add_argument(
        "--format",
        action="append",
        default=[],
        metavar="NAME",
        help="a rule format to read instead of the configured formats "
        "(agents, claude, gemini, copilot, cursor, windsurf, cline; repeat for more)",
    )


async def _rules(args: argparse.Namespace, config: HarnessConfig, notes: list[str]) -> int:
    from harness._harness import Harness
    from harness.instruction_files.discovery.formats import check_formats
    from harness.workspace import printable

    if args.format:
        config = config.model_copy(update={"formats": check_formats(tuple(args.format))})
    async with Harness(config) as harness:
        explanation = await harness.rules_for(args.workspace, targets=args.target)
    lines = [*notes, f"formats {', '.join(config.formats)}"]
    lines += [printable(line) for line in explanation.lines()] or ["(no candidate rule files)"]
    lines += [f"warning: {printable(warning)}" for warning in explanation.warnings]
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return EXIT_OK


def _build_parser() -> _Parser:
    parser = _Parser(
        prog="harness",
        description="Inspect the context an agent gets: instruction files, prompt layers, budgets.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    def common(sub: argparse.ArgumentParser, *, agent_required: bool) -> None:
        sub.add_argument(
            "workspace",
            metavar="WORKSPACE",
            nargs="?",
            help=(
                "the workspace directory (default: the current one); inside a project (a "
                "project_root_markers entry, .git by default, above it) the build starts at "
                "the project's root, scoped to WORKSPACE"
            ),
        )
        sub.add_argument(
            "--no-project-root",
            action="store_true",
            help="build from WORKSPACE itself, even inside a project",
        )
        sub.add_argument("--agent", required=agent_required, metavar="SLUG", help="agent slug")
        sub.add_argument("--project-id", metavar="ID", help="project id for the database row")
        sub.add_argument(
            "--db",
            metavar="PATH_OR_URL",
            help="agent_instructions: an SQLite file, or a postgresql:// URL",
        )
        sub.add_argument("--config", metavar="PATH", help="harness TOML config file")
        _target_option(sub)

    debug = _debug_parser(commands, common)

    sources = commands.add_parser(
        "sources", help="list the discovered instruction files in precedence order"
    )
    common(sources, agent_required=False)
    _rules_parser(commands, common)
    from harness.manifests._commands import add_commands

    add_commands(commands, debug=debug)  # manifests, replay, diff; and debug --record
    from harness.inspector._command import add_commands as add_inspector_commands

    add_inspector_commands(commands)  # view; and diff --text
    from harness.cases._command import add_commands as add_case_commands

    add_case_commands(commands)  # case save, case check
    return parser


def _read_units(path: str, option: str) -> list[Unit]:
    from harness._unit_files import UnitFileError, read_unit_file

    try:
        return read_unit_file(path, label=f"{option} {path}")
    except UnitFileError as exc:
        raise UsageError(str(exc)) from None


def _check_workspace(given: str) -> None:
    if not given:
        raise UsageError("workspace is empty: give a directory (. for the current one)")
    workspace = Path(given)
    if not workspace.exists():
        raise UsageError(f"workspace {given!r} does not exist")
    if not workspace.is_dir():
        raise UsageError(f"workspace {given!r} is not a directory")


def _check_paths(args: argparse.Namespace) -> None:
    if args.workspace is not None:  # None: the current directory
        _check_workspace(args.workspace)
    if args.project_id is not None and not args.project_id:
        raise UsageError("--project-id is empty: give the project's id, or leave the option out")
    if args.project_id is not None and args.agent is None:
        raise UsageError("--project-id needs --agent: the database row is per agent")
    if args.db is not None and args.project_id is None:
        raise UsageError("--db needs --project-id: the database row is per project")
    if args.project_id is not None and args.db is None:
        raise UsageError("--project-id needs --db: the database that holds the project's row")
    if args.db is not None and not is_url(args.db) and not Path(args.db).is_file():
        if not Path(args.db).exists():
            raise UsageError(f"--db {args.db!r}: no such database file")
        raise UsageError(f"--db {args.db!r}: not a database file (not a regular file)")


def _scoped(args: argparse.Namespace, config: HarnessConfig) -> list[str]:
    """Promote WORKSPACE to its project's root (unless --no-project-root) and check the
    targets; ``args`` then holds the workspace and targets to build from. Returns the lines
    that explain a promotion."""
    from harness._cli_scope import command_scope
    from harness.workspace import printable

    scope = command_scope(
        args.workspace,
        args.target,
        markers=config.project_root_markers,
        promote=not args.no_project_root,
    )
    args.workspace, args.target = scope.workspace, scope.targets
    return [printable(note) for note in scope.notes]


async def _debug(args: argparse.Namespace, config: HarnessConfig, notes: list[str]) -> int:
    from harness._harness import Harness
    from harness.debug import format_build
    from harness.prompt_assembler import BudgetError
    from harness.workspace import printable

    budgets = _budgets(args.budget)
    rules = _read_units(args.rules, "--rules") if args.rules else []
    state = _read_units(args.task_state, "--task-state") if args.task_state else []
    harness = Harness(config, database=args.db, manifests=args.record, watch_store=False)
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
            targets=args.target,
        )
    if args.json or args.text:
        for note in notes:  # stdout holds exactly the manifest or the prompt
            sys.stderr.write(f"harness: {note}\n")
        for warning in build.warnings:
            sys.stderr.write(f"harness: warning: {printable(warning)}\n")
    if args.json:
        sys.stdout.write(json.dumps(build.prompt.manifest(), indent=2, ensure_ascii=False) + "\n")
    elif args.text:
        # The exact bytes the model gets: no escaping, no trailing newline added.
        sys.stdout.flush()
        sys.stdout.buffer.write(build.prompt.text.encode("utf-8", "surrogatepass"))
    else:
        sys.stdout.write("".join(f"{note}\n" for note in notes) + format_build(build))
    if build.prompt.manifest_id is not None:  # --record: the id, last (stdout keeps its bytes)
        sys.stdout.flush()
        out = sys.stderr if args.json or args.text else sys.stdout
        out.write(f"{build.prompt.manifest_id}\n")
    return EXIT_OK


def _format_sources(
    instruction_set: InstructionSet, context: ProjectContext, args: argparse.Namespace
) -> str:
    from harness.workspace import printable

    who = f"agent {args.agent}" if args.agent else "no agent"
    project = f", project {args.project_id}" if args.project_id else ", no project"
    header = f"instruction files in {args.workspace} ({who}{project}), least authoritative first:"
    lines = [printable(header)]
    if instruction_set.targets:
        from harness.debug import scope_line
        from harness.workspace import display_path

        scope = scope_line(instruction_set.targets, instruction_set.chain)
        shown = ", ".join(display_path(target) for target in instruction_set.targets)
        lines.append(f"{scope}: {shown}")
    if not instruction_set.sources:
        lines.append("  (none)")
    paths = [printable(source.path) for source in instruction_set.sources]
    width = max([40, *map(len, paths)])
    for index, (source, path) in enumerate(zip(instruction_set.sources, paths, strict=True), 1):
        size = len(source.content.encode("utf-8"))
        lines.append(
            f"  {index:>2}  {source.kind:<9}  {path:<{width}} {size:>7,} B  {source.digest[:8]}"
        )
    lines.append("")
    lines.append("project context (.AGENTS/), in layer order:")
    if not context.units:
        lines.append("  (none)")
    ids = [printable(unit.id) for unit in context.units]
    width = max([51, *map(len, ids)])
    for index, (unit, unit_id) in enumerate(zip(context.units, ids, strict=True), 1):
        lines.append(f"  {index:>2}  {unit_id:<{width}} {len(unit.text.encode('utf-8')):>7,} B")
    warnings = [*instruction_set.warnings, *context.warnings]
    lines.append("")
    lines.append(f"warnings ({len(warnings)})" if warnings else "warnings   none")
    lines.extend(f"  ! {printable(warning)}" for warning in warnings)
    return "\n".join(lines) + "\n"


async def _sources(args: argparse.Namespace, config: HarnessConfig, notes: list[str]) -> int:
    from harness._harness import Harness

    harness = Harness(config, database=args.db, watch_store=False)
    agent = args.agent
    if agent is not None:
        harness.roster.identity(agent)
    async with harness:
        instruction_set = await harness.instruction_files.load(
            args.workspace, agent=agent or "-", project_id=args.project_id, targets=args.target
        )
    context = await harness.project_context(args.workspace)
    sys.stdout.write("".join(f"{note}\n" for note in notes))
    sys.stdout.write(_format_sources(instruction_set, context, args))
    return EXIT_OK


def _config(args: argparse.Namespace) -> HarnessConfig:
    from harness.config import load_config

    return load_config(args.config)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``harness`` and ``python -m harness``; returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if not arguments:  # a bare `harness`: what it can do
        sys.stdout.write(_build_parser().format_help())
        return EXIT_OK
    try:
        args = _build_parser().parse_args(arguments)
    except UsageError as exc:
        sys.stderr.write(f"harness: error: {_one_line(exc)}\n")
        return EXIT_USAGE
    try:
        import anyio

        from harness.cases._command import COMMANDS as CASE_COMMANDS
        from harness.inspector._command import COMMANDS as INSPECTOR_COMMANDS
        from harness.manifests._commands import COMMANDS

        # the inspector's diff adds --text
        commands = {**COMMANDS, **INSPECTOR_COMMANDS, **CASE_COMMANDS}
        if args.command in commands:
            return anyio.run(commands[args.command], args)
        _check_paths(args)
        config = _config(args)
        notes = _scoped(args, config)
        command = {"debug": _debug, "rules": _rules}.get(args.command, _sources)
        return anyio.run(command, args, config, notes)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        cause = single_cause(exc)
        # Everything harness raises on purpose means bad input (status 2); anything else is
        # our bug, reported as an internal error (status 1), never passed off as the user's.
        if isinstance(cause, HarnessError):
            sys.stderr.write(f"harness: error: {_one_line(cause)}\n")
            return EXIT_USAGE
        sys.stderr.write(f"harness: internal error: {type(cause).__name__}: {_one_line(cause)}\n")
        return EXIT_FAILURE
