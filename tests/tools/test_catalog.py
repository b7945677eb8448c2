"""Building a catalog: malformed ones refused by name, SDK Tool objects taken in wire form."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest

from harness import HarnessError
from harness.tools import ToolCatalog, ToolCatalogError
from tests.tools.server import INITIAL_TOOLS


@pytest.mark.parametrize(
    ("tools", "match"),
    [
        ([{"inputSchema": {"type": "object"}}], "tool #0 has no name"),
        ([{"name": "", "inputSchema": {"type": "object"}}], "tool #0 has no name"),
        ([{"name": "t", "inputSchema": "object"}], "tool 't' has no inputSchema object"),
        ([{"name": "t", "inputSchema": ["object"]}], "tool 't' has no inputSchema object"),
        ([{"name": "t"}], "tool 't' has no inputSchema object"),
        (
            [{"name": "t", "inputSchema": {}}, {"name": "t", "inputSchema": {}}],
            "lists tool 't' twice",
        ),
        (["t"], "tool #0 is a str"),
    ],
)
def test_malformed_catalogs_are_refused_naming_the_tool(tools: list[Any], match: str) -> None:
    with pytest.raises(ToolCatalogError, match=match) as caught:
        ToolCatalog.from_tools("repo", tools)
    assert isinstance(caught.value, HarnessError) and isinstance(caught.value, ValueError)


def test_sdk_tool_objects_digest_as_their_wire_form() -> None:
    objects = [mcp_types.Tool.model_validate(tool) for tool in INITIAL_TOOLS]
    assert (
        ToolCatalog.from_tools("repo", objects).digest
        == ToolCatalog.from_tools("repo", INITIAL_TOOLS).digest
    )


def test_entries_are_sorted_and_keep_the_definition() -> None:
    catalog = ToolCatalog.from_tools("repo", list(reversed(INITIAL_TOOLS)))
    assert [t.name for t in catalog.tools] == sorted(t["name"] for t in INITIAL_TOOLS)
    read = catalog.get("read_file")
    assert read is not None and read.definition["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
    }
    assert read.canonical_input_schema().startswith('{"properties":{"path":')
    assert catalog.get("missing") is None


def test_the_digest_changes_with_the_set_of_tools() -> None:
    whole = ToolCatalog.from_tools("repo", INITIAL_TOOLS)
    fewer = ToolCatalog.from_tools("repo", INITIAL_TOOLS[1:])
    assert whole.digest != fewer.digest


def test_definitions_are_read_only_so_they_keep_their_digest() -> None:
    source = [dict(tool) for tool in INITIAL_TOOLS]
    read = ToolCatalog.from_tools("repo", source).get("read_file")
    assert read is not None
    with pytest.raises(TypeError):
        read.definition["inputSchema"]["type"] = "string"  # type: ignore[index]
    source[0]["inputSchema"] = {"type": "string"}  # the caller's data is copied, not kept
    assert read.definition["inputSchema"]["type"] == "object"
    mutable = read.plain()
    mutable["inputSchema"]["type"] = "string"
    assert read.definition["inputSchema"]["type"] == "object"
