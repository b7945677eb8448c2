"""``Harness.build_prompt(..., tools=...)``: refused by a layout without the tools layer,
ignored when empty, and recorded in the build's context."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from harness import EXTENDED_LAYOUT, Harness, HarnessConfig
from harness.config import Envelope
from harness.manifests import ManifestStore
from harness.tools import PinStore, ToolCatalog, ToolPolicy, tools_record
from tests.cli import ACME, ACME_DB
from tests.tools.server import INITIAL_TOOLS


async def test_tools_need_the_tools_layer(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with await PinStore.open(tmp_path / "pins.db") as pins:
            check = await pins.check(
                ToolCatalog.from_tools("repo", INITIAL_TOOLS), ToolPolicy({"repo": ["search"]})
            )
        async with Harness(database=ACME_DB) as harness:
            plain = await harness.build_prompt(ACME, agent="reviewer", project_id="acme")
            empty = await harness.build_prompt(ACME, agent="reviewer", project_id="acme", tools=())
            assert empty.text == plain.text
            with pytest.raises(ValueError, match=r"'tools' layer.*EXTENDED_LAYOUT"):
                await harness.build_prompt(ACME, agent="reviewer", project_id="acme", tools=check)


async def test_the_tools_layer_renders_allowed_tools_and_the_record_keeps_digests(
    tmp_path: Path,
) -> None:
    """With the extended layout only allowed tools are rendered, inside the untrusted
    boundary; the recorded manifest holds the catalog digest, each rendered tool's digest and
    each blocked tool with its reason, and replay rebuilds the same prompt."""
    config = HarnessConfig(layout=EXTENDED_LAYOUT, envelope=Envelope(model_context_limit=131_072))
    catalog = ToolCatalog.from_tools("repo", INITIAL_TOOLS)
    with anyio.fail_after(60):
        async with await PinStore.open(tmp_path / "pins.db") as pins:
            check = await pins.check(catalog, ToolPolicy({"repo": ["read_file", "search"]}))
        store = tmp_path / "manifests.db"
        async with Harness(config, database=ACME_DB, manifests=store) as harness:
            prompt = await harness.build_prompt(
                ACME, agent="reviewer", project_id="acme", tools=check
            )
        tools = next(layer for layer in prompt.layers if layer.name == "tools")
        assert tools.kept == ("mcp:repo/read_file", "mcp:repo/search")
        assert "Read a file of the repository." in prompt.text
        assert "Test control: change the catalog." not in prompt.text  # blocked: never shown
        assert "<untrusted-data" in prompt.text
        async with ManifestStore.open(store) as manifests:
            recorded = await manifests.get(prompt.manifest_id or "")
            replay = await manifests.replay(prompt.manifest_id or "")
    assert recorded["tools"] == tools_record(check)
    assert recorded["tools"][0]["digest"] == catalog.digest
    blocked = {entry["name"]: entry["reason"] for entry in recorded["tools"][0]["blocked"]}
    assert blocked == {"list_dir": "not_allowed", "mutate": "not_allowed"}
    assert replay.identical
