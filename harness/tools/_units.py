"""The ``tools`` layer: one unit per allowed tool, rendered the same way every time.

::

    from harness.tools._units import tool_units, tools_record

    units = tool_units([check_repo, check_web])   # sorted by server, then tool name
    record = tools_record([check_repo, check_web]) # digests and blocked tools, for a manifest

Only a check's ``allowed`` tools become units; a blocked or unannounced tool has no text in
the prompt at all. A unit's text is the tool's name, server, description and canonical input
schema (RFC 8785 JSON: byte-identical for the same definition). A server the policy does not
trust gives ``untrusted`` units, which the assembler renders inside its data boundary (a
description is the server's words, not the host's instructions). Each unit's ``version`` is
the tool's digest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from harness.errors import ArgumentError, ArgumentTypeError
from harness.prompt_assembler import Unit
from harness.tools._catalog import ToolEntry
from harness.tools._check import CatalogCheck

__all__ = ["LAYER", "as_checks", "tool_unit", "tool_units", "tools_layer", "tools_record"]

LAYER = "tools"
"""The layer the units go to (an information layer of the extended layout)."""


def as_checks(tools: CatalogCheck | Sequence[CatalogCheck]) -> tuple[CatalogCheck, ...]:
    """One check or several, as a tuple; two checks of one server raise ``ArgumentError``."""
    checks = (tools,) if isinstance(tools, CatalogCheck) else tuple(tools)
    servers: set[str] = set()
    for check in checks:
        if not isinstance(check, CatalogCheck):
            raise ArgumentTypeError(
                f"tools: expected CatalogCheck values (from PinStore.check), got "
                f"{type(check).__name__}"
            )
        if check.server in servers:
            raise ArgumentError(
                f"tools: two checks of server {check.server!r}; pass only the newest one"
            )
        servers.add(check.server)
    return checks


def tool_unit(entry: ToolEntry, *, trusted: bool) -> Unit:
    """The unit of one allowed tool (id and source ``mcp:<server>/<name>``, quoted)."""
    where = f"mcp:{quote(entry.server, safe='')}/{quote(entry.name, safe='')}"
    description = entry.definition.get("description")
    lines = [f"tool: {entry.name}", f"server: {entry.server}"]
    if isinstance(description, str) and description:
        lines.append(f"description: {description}")
    lines.append(f"input schema: {entry.canonical_input_schema()}")
    return Unit(
        where,
        "\n".join(lines),
        source=where,
        trust="trusted" if trusted else "untrusted",
        version=entry.digest,
    )


def tool_units(tools: CatalogCheck | Sequence[CatalogCheck]) -> list[Unit]:
    """The ``tools`` layer's units: every allowed tool of every check, by server and name."""
    checks = sorted(as_checks(tools), key=lambda check: check.server)
    return [
        tool_unit(entry, trusted=check.trusted)
        for check in checks
        for entry in sorted(check.allowed, key=lambda entry: entry.name)
    ]


def tools_record(tools: CatalogCheck | Sequence[CatalogCheck]) -> list[dict[str, Any]]:
    """What a manifest records of the tools: per server, its catalog digest, each allowed
    tool's digest, each blocked tool with its reason and each change (by server)."""
    return [check.record() for check in sorted(as_checks(tools), key=lambda c: c.server)]


def tools_layer(tools: CatalogCheck | Sequence[CatalogCheck], layers: Sequence[str]) -> list[Unit]:
    """``tool_units(tools)`` for a build whose layout has the layers ``layers``; a layout
    without a ``tools`` layer raises ``ArgumentError`` (a ``ValueError``) saying what to use."""
    if LAYER not in layers:
        raise ArgumentError(
            f"tools= needs the {LAYER!r} layer, which this layout lacks (it has "
            f"{', '.join(layers)}): use EXTENDED_LAYOUT (config: [layout] layers = [...] "
            f"including {LAYER!r}) or add the layer"
        )
    return tool_units(tools)
