"""How a Harness build applies a context request: evidence in, gates, readiness, the record.

::

    from datetime import UTC, datetime
    from harness.context_requests import ContextRequest, Requirement
    from harness.context_requests._build import prepare
    from harness.prompt_assembler import EXTENDED_LAYOUT, Unit

    request = ContextRequest("fix", requirements=[Requirement("issue")])
    issue = Unit("issue-842", "parser drops spans", kind="issue", trust="untrusted")
    plan = prepare({}, EXTENDED_LAYOUT, request, [issue], datetime.now(UTC))
    assert plan.readiness is not None and plan.readiness.status == "READY"
    assert plan.layers["evidence"] == (issue,)

Pure: the caller assembles ``plan.layers`` and stores ``plan.record(...)`` in the manifest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness.context_requests._gate import Readiness, readiness
from harness.context_requests._request import ContextRequest
from harness.context_requests._screen import LayerValue, Screened, as_units, screen
from harness.errors import ArgumentError, ArgumentTypeError
from harness.prompt_assembler._layout import Layout
from harness.prompt_assembler._values import Unit

__all__ = ["Plan", "check_evidence", "prepare"]

EVIDENCE_LAYER = "evidence"


@dataclass(frozen=True, slots=True)
class Plan:
    """The layers to assemble, what the screen removed, and the readiness (None: no request)."""

    layers: dict[str, LayerValue]
    screened: Screened
    readiness: Readiness | None
    request: ContextRequest | None

    def record(
        self,
        extra: Mapping[str, Any] | None = None,
        excluded: Sequence[Mapping[str, str]] = (),
    ) -> str | None:
        """The manifest's ``request`` entry as canonical JSON; None when there is nothing to
        say (no request, nothing removed, no ``extra``). ``excluded``: more units not
        rendered that were removed before the build (rule files not matched or shadowed)."""
        data: dict[str, Any] = {}
        if self.request is not None:
            data["request"] = self.request.to_dict()
        if self.readiness is not None:
            data["readiness"] = self.readiness.to_dict()
        if self.screened.excluded:
            data.update(self.screened.to_dict())
        if excluded:
            data["excluded"] = [*data.get("excluded", ()), *map(dict, excluded)]
        if extra:
            data.update(extra)
        if not data:
            return None
        return json.dumps(data, ensure_ascii=False, sort_keys=True)


def check_evidence(evidence: object, layout: Layout) -> tuple[Unit, ...]:
    """``evidence`` as units; a layout without the evidence layer refuses any."""
    if isinstance(evidence, str | Unit) or not isinstance(evidence, Sequence):
        raise ArgumentTypeError(f"evidence must be a sequence of Unit, got {evidence!r}")
    units = tuple(evidence)
    for unit in units:
        if not isinstance(unit, Unit):
            raise ArgumentTypeError(f"evidence: expected Unit items, got {unit!r}")
    names = tuple(spec.name for spec in layout)
    if units and EVIDENCE_LAYER not in names:
        raise ArgumentError(
            f"evidence was given but the layout has no {EVIDENCE_LAYER!r} layer (its layers: "
            f"{', '.join(names)}); use EXTENDED_LAYOUT, or add the {EVIDENCE_LAYER} layer to "
            "[layout] layers"
        )
    return units


def prepare(
    layers: Mapping[str, LayerValue],
    layout: Layout,
    request: ContextRequest | None,
    evidence: Sequence[Unit],
    now: datetime,
) -> Plan:
    """Add ``evidence`` to its layer, judge readiness over every unit (metadata only for the
    denied), then screen out denied units, outranked ones no requirement asks for, and
    repeated text, before anything is rendered."""
    if request is not None and not isinstance(request, ContextRequest):
        raise ArgumentTypeError(f"request must be a ContextRequest or None, got {request!r}")
    units = check_evidence(evidence, layout)
    merged = dict(layers)
    if units:
        merged[EVIDENCE_LAYER] = units
    ready = None
    if request is not None:
        every = [u for spec in layout if spec.name in merged for u in _units(spec.name, merged)]
        ready = readiness(request, every, now=now)
    principal = request.principal if request is not None else frozenset()
    screened_layers, screened = screen(merged, layout, principal, _outranked(ready))
    return Plan(screened_layers, screened, ready, request)


def _outranked(ready: Readiness | None) -> frozenset[str]:
    """The outranked units no requirement asks for: the higher authority wins their claim,
    so they are not rendered. One a requirement matches stays (the decision needs it)."""
    if ready is None or not ready.outranked:
        return frozenset()
    needed = {uid for item in ready.requirements for uid in (*item.units, *item.corroborating)}
    return frozenset(ready.outranked) - needed


def _units(name: str, layers: Mapping[str, LayerValue]) -> tuple[Unit, ...]:
    return as_units(name, layers[name])
