"""``Harness.build_prompt(..., tools=...)``: refused by a layout without the tools layer,
ignored when empty, and recorded in the build's context."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from harness import Harness
from harness.tools import PinStore, ToolCatalog, ToolPolicy
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
