"""``harness case save`` and ``harness case check``: context cases from the command line.

::

    harness case save manifests.db 01J9Z3... --expect config/prod/payment.yaml \\
        --classify missing_config -o payment.case.json
    harness case check payment.case.json     # exit 0 passed, 1 a unit is missing, 2 bad input

``harness.cli`` registers them (``add_commands``) and runs them (``COMMANDS``). Bad input (a
missing store, an unknown id or unit, a file that is not a case) raises a ``HarnessError``:
one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from harness.manifests._commands import add_store_argument

__all__ = ["COMMANDS", "EXIT_MISSING", "add_commands"]

EXIT_MISSING = 1


def add_commands(commands: Any) -> None:
    """Add ``case`` (with ``save`` and ``check``) to ``commands``, an argparse subparsers
    action."""
    case = commands.add_parser(
        "case",
        help="save a recorded build as a replayable context case, or check one",
        description=(
            "A context case is a recorded build, the units it should have included and a word "
            "classifying the failure, in one self-contained JSON file."
        ),
    )
    actions = case.add_subparsers(dest="case_command", metavar="{save,check}", required=True)
    save = actions.add_parser(
        "save",
        help="write the case of a recorded build",
        description="Write the case of build ID recorded in STORE to CASE.json.",
    )
    add_store_argument(save)
    save.add_argument("manifest_id", metavar="ID")
    save.add_argument(
        "--expect", nargs="+", required=True, metavar="UNIT_ID", help="units it must include"
    )
    save.add_argument(
        "--classify", required=True, metavar="WORD", help="what went wrong, e.g. missing_config"
    )
    save.add_argument("-o", "--output", required=True, metavar="CASE.json", help="file to write")
    check = actions.add_parser(
        "check",
        help="re-run the assembler on a case's recorded inputs",
        description=(
            "Re-run the current assembler on the inputs CASE.json recorded: exit 0 when every "
            "expected unit is included, 1 naming each missing unit and its drop reason, 2 for "
            "bad input."
        ),
    )
    check.add_argument("case", metavar="CASE.json")
    check.add_argument("--json", action="store_true", help="the outcome as JSON")


async def _case(args: argparse.Namespace) -> int:
    from harness.cases import check_case, save_case

    if args.case_command == "save":
        from harness.manifests._store import ManifestStore

        async with ManifestStore.open(args.store) as store:
            await save_case(
                store,
                args.manifest_id,
                expect=args.expect,
                classify=args.classify,
                path=args.output,
            )
        sys.stdout.write(f"{args.output}\n")
        return 0
    outcome = check_case(args.case)
    if args.json:
        sys.stdout.write(json.dumps(outcome.to_json(), indent=2, ensure_ascii=True) + "\n")
    else:
        sys.stdout.write(_escaped(outcome.render()))
    return 0 if outcome.passed else EXIT_MISSING


def _escaped(text: str) -> str:
    from harness.manifests._diff import display_value

    return "\n".join(display_value(line) for line in text.split("\n"))


COMMANDS: dict[str, Callable[[argparse.Namespace], Awaitable[int]]] = {"case": _case}
"""Subcommand name -> the coroutine that runs it (returns the exit status)."""
