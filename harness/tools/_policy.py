"""The host's decision about which tools may enter a run: an exact allowlist per server.

::

    from harness.tools import ToolPolicy

    policy = ToolPolicy({"repo": ["read_file", "search"]}, on_change="block",
                        trusted_servers=["repo"])
    assert policy.allows("repo", "read_file") and not policy.allows("repo", "delete_file")

Names match exactly (no patterns: a pattern would admit tools nobody has seen). A server's
annotations (``readOnlyHint``, ``destructiveHint``) are hints from that server and play no
part here. ``on_change`` says what happens to an allowed tool whose definition no longer
matches its pin: ``"block"`` keeps it out until approved, ``"warn"`` lets it in and reports
it. A server in ``trusted_servers`` has its tools rendered as trusted text; every other
server's are rendered inside the untrusted data boundary.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from harness.errors import ArgumentError, ArgumentTypeError

__all__ = ["OnChange", "ToolPolicy"]

OnChange = Literal["block", "warn"]


@dataclass(frozen=True, slots=True, init=False)
class ToolPolicy:
    """``allow``: server -> the tool names it may contribute; everything else is refused."""

    allow: Mapping[str, frozenset[str]]
    on_change: OnChange
    trusted_servers: frozenset[str]

    def __init__(
        self,
        allow: Mapping[str, Sequence[str]],
        *,
        on_change: OnChange = "block",
        trusted_servers: Collection[str] = (),
    ) -> None:
        if on_change not in ("block", "warn"):
            raise ArgumentError(f"on_change must be 'block' or 'warn', got {on_change!r}")
        if not isinstance(allow, Mapping):
            raise ArgumentTypeError(
                f"allow must map a server to its tool names, got {type(allow).__name__}"
            )
        table: dict[str, frozenset[str]] = {}
        for server, names in allow.items():
            if isinstance(names, str):
                raise ArgumentTypeError(
                    f"allow[{server!r}] is the string {names!r}; give a list of tool names, "
                    f"e.g. [{names!r}]"
                )
            table[server] = frozenset(names)
        if isinstance(trusted_servers, str):
            raise ArgumentTypeError(
                f"trusted_servers is the string {trusted_servers!r}; give a list of server names"
            )
        object.__setattr__(self, "allow", MappingProxyType(table))
        object.__setattr__(self, "on_change", on_change)
        object.__setattr__(self, "trusted_servers", frozenset(trusted_servers))

    def allows(self, server: str, name: str) -> bool:
        """Whether the host lets ``server``'s tool ``name`` into a run (before pins)."""
        return name in self.allow.get(server, frozenset())

    def trusts(self, server: str) -> bool:
        """Whether ``server``'s tool text is rendered as trusted (else as untrusted data)."""
        return server in self.trusted_servers
