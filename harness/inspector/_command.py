"""``harness view`` (the inspector page of recorded builds) and ``harness diff --text``.

::

    harness view manifests.db 01J9Z3... -o build.html             # one build
    harness view manifests.db 01J9Z3... 01J9Z4... -o change.html  # two, and their diff
    harness diff manifests.db 01J9Z3... 01J9Z4... --text          # + line differences

``harness.cli`` registers them (``add_commands``) and runs them (``COMMANDS``). Bad input (a
missing store, an unknown id, an output file that cannot be written) raises a ``HarnessError``:
one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from harness.errors import HarnessError
from harness.manifests._commands import add_store_argument

__all__ = ["COMMANDS", "DiffOptionsError", "ViewError", "add_commands", "write_view"]


class ViewError(HarnessError, OSError):
    """The page could not be written where ``-o`` asked."""


class DiffOptionsError(HarnessError, ValueError):
    """``harness diff`` options that contradict each other."""


def add_commands(commands: Any) -> None:
    """Add ``view`` to ``commands`` (an ``argparse`` subparsers action) and ``--text`` to its
    ``diff`` subcommand (already registered)."""
    view = commands.add_parser(
        "view",
        help="write a recorded build (or two and their diff) as one self-contained HTML page",
        description=(
            "Write the build ID recorded in STORE as one HTML file that loads nothing and runs "
            "no script: per layer its tokens against the budget, every unit with its status, "
            "source, tokens and text; targets, imports, skills, tools and readiness. With ID2 "
            "also both builds' diff, with line differences of changed units."
        ),
    )
    add_store_argument(view)
    view.add_argument("id_a", metavar="ID")
    view.add_argument("id_b", metavar="ID2", nargs="?")
    view.add_argument("-o", "--output", required=True, metavar="FILE.html", help="page to write")
    commands.choices["diff"].add_argument(
        "--text",
        action="store_true",
        help="also the line differences of changed units' texts (not with --json)",
    )


async def write_view(store_url: str, id_a: str, id_b: str | None, output: str) -> anyio.Path:
    """Write the page of ``id_a`` (and ``id_b`` and their diff) recorded in ``store_url``."""
    from harness.inspector._page import render_page
    from harness.inspector._textdiff import text_differences
    from harness.manifests._diff import diff_manifests
    from harness.manifests._store import ManifestStore

    async with ManifestStore.open(store_url) as store:
        manifest = await store.get(id_a)
        other = await store.get(id_b) if id_b is not None else None
        built = [m for m in (manifest, other) if m is not None]
        texts = await store.texts(_addresses(built))
    diff = None
    if other is not None:
        change = diff_manifests(manifest, other)
        diff = (change, text_differences(change, texts))
    page = render_page(manifest, texts, other, diff=diff)
    path = anyio.Path(output)
    try:
        await path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ViewError(f"-o {output!r}: cannot write the page ({exc.strerror or exc})") from None
    return path


def _addresses(manifests: list[dict[str, Any]]) -> list[str]:
    return [
        str(entry["sha256"])
        for manifest in manifests
        for layer in manifest.get("layers", ())
        for entry in (*layer.get("units", ()), *layer.get("dropped_units", ()))
    ]


async def _view(args: argparse.Namespace) -> int:
    path = await write_view(args.store, args.id_a, args.id_b, args.output)
    sys.stdout.write(f"wrote {path}\n")
    return 0


async def _diff(args: argparse.Namespace) -> int:
    from harness.manifests._commands import COMMANDS as MANIFEST_COMMANDS

    if args.text and args.json:
        raise DiffOptionsError(
            "--text and --json cannot be combined: --json has the differences for machines, "
            "--text adds the line differences to the readable report; give one"
        )
    status = await MANIFEST_COMMANDS["diff"](args)
    if not args.text:
        return status
    from harness.inspector._textdiff import (
        changed_addresses,
        render_text_differences,
        text_differences,
    )
    from harness.manifests._store import ManifestStore

    async with ManifestStore.open(args.store) as store:
        change = await store.diff(args.id_a, args.id_b)
        texts = await store.texts(changed_addresses(change))
    sys.stdout.write(render_text_differences(text_differences(change, texts)))
    return status


COMMANDS: dict[str, Callable[[argparse.Namespace], Awaitable[int]]] = {
    "view": _view,
    "diff": _diff,
}
"""Subcommand name -> the coroutine that runs it (``diff`` wraps the manifests' one)."""
