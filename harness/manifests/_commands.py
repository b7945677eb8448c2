"""The manifest subcommands of ``harness``: ``manifests``, ``replay`` and ``diff``.

::

    harness manifests manifests.db --agent reviewer --limit 5   # newest first
    harness replay manifests.db 01J9Z3...                       # exit 0 identical, 1 different
    harness diff manifests.db 01J9Z3... 01J9Z4... [--json]      # exit 0 either way

``harness.cli`` registers them (``add_commands``) and runs them (``COMMANDS``); bad input (a
missing or foreign store, an unknown id, a tokenizer that cannot be rebuilt) raises a
``HarnessError``, which the CLI reports in one line with exit status 2. Everything printed
that came from a store (ids, agents, paths, differences) goes through the display escaper,
so a hostile record cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["COMMANDS", "EXIT_DIFFERENT", "add_commands"]

EXIT_DIFFERENT = 1


def add_commands(commands: Any, *, debug: argparse.ArgumentParser) -> None:
    """Add the subcommands to ``commands`` (an ``argparse`` subparsers action), and
    ``--record`` to the ``debug`` subcommand."""
    debug.add_argument(
        "--record",
        metavar="PATH",
        help="record the build in the manifest store PATH (created if missing) and print its "
        "manifest id as the last line (on stderr with --json or --text)",
    )
    listing = commands.add_parser(
        "manifests",
        help="list the builds recorded in a manifest store, newest first",
        description="List the builds recorded in the store PATH, newest first.",
    )
    add_store_argument(listing)
    listing.add_argument("--agent", metavar="SLUG", help="only this agent's builds")
    listing.add_argument("--project-id", metavar="ID", help="only this project's builds")
    listing.add_argument("--limit", type=_limit, default=100, metavar="N", help="default 100")
    listing.add_argument("--json", action="store_true", help="one JSON array instead")

    replay = commands.add_parser(
        "replay",
        help="rebuild a recorded prompt and check it is byte-identical",
        description=(
            "Rebuild the prompt MANIFEST_ID recorded from its stored inputs and compare it with "
            "the record: exit 0 identical, 1 different (each difference printed), 2 bad input."
        ),
    )
    add_store_argument(replay)
    replay.add_argument("manifest_id", metavar="MANIFEST_ID")
    replay.add_argument("--json", action="store_true", help="the outcome as JSON")

    diff = commands.add_parser(
        "diff",
        help="what changed between two recorded builds, per layer",
        description=(
            "Units added (in B, not in A), removed, changed (same id, other text) and trimmed "
            "differently (kept in one, dropped or cut in the other), per layer. Exit 0 whether "
            "or not they differ, 2 for bad input."
        ),
    )
    add_store_argument(diff)
    diff.add_argument("id_a", metavar="ID_A")
    diff.add_argument("id_b", metavar="ID_B")
    diff.add_argument("--json", action="store_true", help="the differences as JSON")


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """The positional STORE every command reading recorded builds takes, worded once."""
    parser.add_argument(
        "store", metavar="STORE", help="the manifest store: an SQLite file or a postgresql:// URL"
    )


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a limit cannot be negative")
    return value


def _dump(value: Any) -> str:
    # ASCII JSON: a lone surrogate or a control character in a record cannot reach the terminal.
    return json.dumps(value, indent=2, ensure_ascii=True) + "\n"


def _cell(value: Any) -> str:
    from harness.manifests._diff import display_value

    return display_value(value)


async def _manifests(args: argparse.Namespace) -> int:
    from harness.manifests._store import ManifestStore

    async with ManifestStore.open(args.store) as store:
        rows = await store.list(agent=args.agent, project_id=args.project_id, limit=args.limit)
    if args.json:
        sys.stdout.write(_dump(rows))
        return 0
    if not rows:
        sys.stdout.write("no recorded builds\n")
        return 0
    lines = [
        f"{'manifest id':<26}  {'requested at (UTC)':<19}  {'agent':<12}  "
        f"{'project':<10}  {'tokens':>7}  digest        workspace"
    ]
    for row in rows:
        lines.append(
            f"{row['manifest_id']:<26}  {_cell(row['requested_at'])[:19]:<19}  "
            f"{_cell(row['agent']):<12}  {_cell(row['project_id']):<10}  "
            f"{_cell(row.get('tokens')):>7}  {str(row['digest'])[:12]:<12}  "
            f"{_cell(row['workspace'])}"
        )
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


async def _replay(args: argparse.Namespace) -> int:
    from harness.manifests._store import ManifestStore

    async with ManifestStore.open(args.store) as store:
        outcome = await store.replay(args.manifest_id)
    if args.json:
        sys.stdout.write(_dump(outcome.to_json()))
    elif outcome.identical:
        sys.stdout.write(
            f"identical: manifest {_cell(outcome.manifest_id)} rebuilds byte for byte "
            f"(sha256 {outcome.digest})\n"
        )
    else:
        lines = [
            f"different: manifest {_cell(outcome.manifest_id)} does not rebuild as recorded",
            f"  recorded sha256 {outcome.recorded_digest}",
            f"  replayed sha256 {outcome.digest or '- (could not be rebuilt)'}",
        ]
        lines.extend(f"  ! {_cell(difference)}" for difference in outcome.differences)
        sys.stdout.write("\n".join(lines) + "\n")
    return 0 if outcome.identical else EXIT_DIFFERENT


async def _diff(args: argparse.Namespace) -> int:
    from harness.manifests._store import ManifestStore

    async with ManifestStore.open(args.store) as store:
        change = await store.diff(args.id_a, args.id_b)
    sys.stdout.write(_dump(change.to_json()) if args.json else change.render())
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], Awaitable[int]]] = {
    "manifests": _manifests,
    "replay": _replay,
    "diff": _diff,
}
"""Subcommand name -> the coroutine that runs it (returns the exit status)."""
