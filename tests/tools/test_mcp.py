"""Against a real MCP server over stdio: every page read, digests equal whatever the paging,
and a changing tool list followed by watch, every change caught, no silent transition."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from harness.tools import CatalogCheck, PinStore, ToolCatalog, ToolCatalogError, ToolPolicy
from harness.tools._units import tool_units
from tests.tools.server import INITIAL_TOOLS
from tests.tools.session import children, connected, modern

ALLOWED = ["read_file", "search", "list_dir"]


async def test_every_page_and_the_same_digest_whatever_the_paging() -> None:
    expected = ToolCatalog.from_tools("repo", INITIAL_TOOLS)
    with anyio.fail_after(120):
        async with connected(1) as (session, _):
            for page_size in (1, 3, 100):
                await _mutate(session, f"page:{page_size}")
                catalog = await ToolCatalog.from_mcp(session, server="repo")
                assert [t.name for t in catalog.tools] == [t.name for t in expected.tools]
                assert [t.digest for t in catalog.tools] == [t.digest for t in expected.tools]
                assert catalog.digest == expected.digest


async def _mutate(session: object, change: str) -> None:
    await session.call_tool("mutate", {"change": change})  # type: ignore[attr-defined]


async def _next(checks: AsyncIterator[CatalogCheck]) -> CatalogCheck:
    return await checks.__anext__()


async def test_watch_follows_list_changed_and_the_run_keeps_its_check(tmp_path: Path) -> None:
    before = children()
    policy = ToolPolicy({"repo": ALLOWED})
    with anyio.fail_after(120):
        async with (
            await PinStore.open(tmp_path / "pins.db") as pins,
            connected() as (session, listener),
        ):
            checks = ToolCatalog.watch(
                session, server="repo", pins=pins, policy=policy, listener=listener
            )
            run_check = await _next(checks)  # what the running agent holds
            assert run_check.allowed_names == ("list_dir", "read_file", "search")

            await _mutate(session, "add_write")  # a new write tool, announced
            added = await _next(checks)
            assert [(b.name, b.reason) for b in added.blocked if b.name == "delete_file"] == [
                ("delete_file", "not_allowed")
            ]
            assert added.digest != run_check.digest
            assert "delete_file" not in "".join(u.text for u in tool_units(added))
            assert run_check.allowed_names == ("list_dir", "read_file", "search")
            assert run_check.catalog.get("delete_file") is None  # the run's check never moves

            await _mutate(session, "param_description")
            schema = await _next(checks)
            assert [
                (b.name, b.reason, b.fields) for b in schema.blocked if b.reason == "changed"
            ] == [("read_file", "changed", ("inputSchema",))]

            await _mutate(session, "destructive")
            flipped = await _next(checks)
            [change] = [c for c in flipped.changes if c.kind == "changed"]
            assert (change.name, change.fields) == ("read_file", ("annotations", "inputSchema"))

            await pins.approve(flipped.catalog, tools=["read_file"])
            await _mutate(session, "description")
            poisoned = await _next(checks)
            assert "read_file" in poisoned.allowed_names
            assert [(b.name, b.fields) for b in poisoned.blocked if b.reason == "changed"] == [
                ("search", ("description",))
            ]

            await _mutate(session, "remove")
            removed = await _next(checks)
            assert ("search", "removed") in [(c.name, c.kind) for c in removed.changes]
            assert "search" not in removed.allowed_names
            await checks.aclose()  # type: ignore[attr-defined]
    assert children() - before == set()  # the server subprocess is gone


async def test_announcements_during_a_listing_are_not_lost(tmp_path: Path) -> None:
    policy = ToolPolicy({"repo": ALLOWED})
    with anyio.fail_after(120):
        async with (
            await PinStore.open(tmp_path / "pins.db") as pins,
            connected(page_size=1) as (session, listener),
        ):
            checks = ToolCatalog.watch(
                session, server="repo", pins=pins, policy=policy, listener=listener
            )
            await _next(checks)
            await _mutate(session, "announce")
            await _mutate(session, "add_write")
            latest = await _next(checks)
            while latest.catalog.get("delete_file") is None:
                latest = await _next(checks)
            assert listener.announcements == 2
            await checks.aclose()  # type: ignore[attr-defined]


async def test_a_handshake_session_without_a_listener_says_how_to_hear_changes(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(120):
        async with await PinStore.open(tmp_path / "pins.db") as pins, connected() as (session, _):
            checks = ToolCatalog.watch(session, server="repo", pins=pins, policy=ToolPolicy({}))
            with pytest.raises(ToolCatalogError, match="message_handler=listener"):
                await _next(checks)


async def test_the_listener_forwards_every_message(tmp_path: Path) -> None:
    seen: list[object] = []

    async def inner(message: object) -> None:
        seen.append(message)

    listener = ToolCatalog.listener(inner)
    await listener("not a notification")
    assert seen == ["not a notification"] and listener.announcements == 0


async def test_a_2026_session_is_watched_through_subscriptions_listen(tmp_path: Path) -> None:
    before = children()
    policy = ToolPolicy({"repo": [*ALLOWED, "delete_file"]})
    with anyio.fail_after(120):
        async with await PinStore.open(tmp_path / "pins.db") as pins, modern() as client:
            checks = ToolCatalog.watch(client, server="repo", pins=pins, policy=policy)
            held = await _next(checks)
            assert held.digest == ToolCatalog.from_tools("repo", INITIAL_TOOLS).digest
            await client.call_tool("mutate", {"change": "add_write"})
            newer = await _next(checks)
            assert "delete_file" in newer.allowed_names  # allowed, and new: first use
            assert [(c.name, c.kind) for c in newer.changes] == [("delete_file", "new")]
            assert "delete_file" not in held.allowed_names  # the held check never moves
            await client.call_tool("mutate", {"change": "destructive"})
            flipped = await _next(checks)
            assert [(b.name, b.fields) for b in flipped.blocked] == [
                ("mutate", ()),
                ("read_file", ("annotations",)),
            ]
            await checks.aclose()  # type: ignore[attr-defined]
    assert children() - before == set()
