"""The ``windsurf`` format: Windsurf's workspace rules and its legacy ``.windsurfrules``.

    >>> from harness.instruction_files.discovery.formats._windsurf import WindsurfFormat
    >>> sorted(WindsurfFormat().candidates())
    ['.windsurf', '.windsurfrules']

Per directory: ``.windsurfrules`` (applied always), then ``.windsurf/rules/*.md`` by path.
A rule's ``trigger`` decides: ``glob`` applies it when a target matches its ``globs``
(relative to the directory holding ``.windsurf/``); ``model_decision`` (the agent judges by
its description) and ``manual`` are not sources (listed); ``always_on``, or no trigger,
applies always.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.instruction_files.discovery._rules import Decision, RuleFormat, text_of

__all__ = ["WindsurfFormat"]


class WindsurfFormat(RuleFormat):
    """``.windsurfrules`` and ``.windsurf/rules/``."""

    name = "windsurf"
    files = (".windsurfrules",)
    rules = (".windsurf", "rules")
    recursive = False
    known = frozenset({"trigger", "globs"})

    def decide(self, fields: Mapping[str, object]) -> Decision:
        trigger = text_of(fields.get("trigger"))
        if trigger == "glob":
            return ("paths", fields.get("globs"))
        if trigger == "model_decision":
            return ("passed", "description only: catalog")
        if trigger == "manual":
            return ("passed", "manual")
        return ("always", None)
