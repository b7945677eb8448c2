"""The tracer, the meter and every instrument of one instrumentation, and what they record.

Imported only by ``harness.telemetry.instrument``: this is where ``opentelemetry`` is imported.
Names follow the GenAI semantic conventions where one fits (``gen_ai.agent.name``,
``gen_ai.tool.name``, ``gen_ai.system_instructions``); harness's own are under ``harness.``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, trace

from harness._version import __version__
from harness.hooks._matching import tool_name

if TYPE_CHECKING:
    from harness._harness import PromptBuild
    from harness.hooks._outcome import HookOutcome
    from harness.instruction_files import InstructionSet

__all__ = ["SCOPE", "Signals"]

SCOPE = "harness"

Attributes = dict[str, Any]


def _counts(build: PromptBuild) -> dict[str, tuple[int, int, list[str]]]:
    """Per layer with any trimming: (dropped, cut, drop reasons), from the manifest (computed
    only then: an untrimmed build pays nothing for it)."""
    if not any(layer.dropped or layer.truncated for layer in build.prompt.layers):
        return {}
    found: dict[str, tuple[int, int, list[str]]] = {}
    for layer in build.prompt.manifest()["layers"]:
        reasons = [str(unit.get("reason") or "unknown") for unit in layer["dropped_units"]]
        cut = sum(1 for unit in layer["units"] if unit.get("truncated"))
        found[layer["name"]] = (len(reasons), cut, reasons)
    return found


class _Totals:
    """A monotonic sum per attribute set, reported through an observable counter."""

    def __init__(self, meter: Any, name: str, unit: str, description: str) -> None:
        self.sums: dict[tuple[tuple[str, Any], ...], int] = {}
        meter.create_observable_counter(name, [self._observe], unit, description)

    def add(self, amount: int, attributes: Attributes | None = None) -> None:
        key = tuple(attributes.items()) if attributes else ()
        self.sums[key] = self.sums.get(key, 0) + amount

    def _observe(self, options: Any) -> list[metrics.Observation]:
        return [metrics.Observation(total, dict(key)) for key, total in list(self.sums.items())]


class Signals:
    """Where the traced methods of one instrumentation send what they saw."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, *, capture_content: bool) -> None:
        tracers = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        meters = meter_provider if meter_provider is not None else metrics.get_meter_provider()
        self.tracer = tracers.get_tracer(SCOPE, __version__)
        meter = meters.get_meter(SCOPE, __version__)
        self.capture_content = capture_content
        # Counted in plain dicts and read by the SDK when it collects (observable counters): a
        # synchronous counter's add costs more than a warm build's bookkeeping, per call.
        self.builds = _Totals(meter, "harness.builds", "{build}", "Prompts built")
        self.tokens = _Totals(
            meter, "harness.build.tokens", "{token}", "Tokens of built prompts, by layer"
        )
        self.drops = _Totals(
            meter, "harness.build.drops", "{unit}", "Units dropped from prompts, by layer, reason"
        )
        self.hits = _Totals(
            meter, "harness.instruction_files._cache.hits", "{load}", "Loads from the cache"
        )
        self.misses = _Totals(
            meter, "harness.instruction_files._cache.misses", "{load}", "Loads that read sources"
        )
        self.events = _Totals(meter, "harness.runtime.events", "{event}", "Supervisor events")
        self.reload = meter.create_histogram(
            "harness.instruction_files.reload.duration", "s", "Time to read sources on a miss"
        )
        self.listener = meter.create_up_down_counter(
            "harness.instruction_files.listener.connected",
            "{connection}",
            "PostgreSQL change-notice listeners connected",
        )
        self.hook_duration = meter.create_histogram(
            "harness.hooks.duration", "s", "Duration of hook runs, by phase"
        )

    # ------------------------------------------------------------------ builds

    def build_attributes(self, build: PromptBuild) -> Attributes:
        prompt = build.prompt
        attributes: Attributes = {
            "gen_ai.agent.name": build.agent,
            "harness.prompt.digest": prompt.digest,
            "harness.prompt.tokens": prompt.tokens,
            "harness.prompt.estimated": prompt.estimated,
            "harness._tokenizer": prompt.tokenizer_name,
        }
        if prompt.manifest_id is not None:
            attributes["harness.manifest.id"] = prompt.manifest_id
        if build.project_id is not None:
            attributes["harness.project.id"] = build.project_id
        trimmed = _counts(build)
        for layer in prompt.layers:
            dropped, cut, reasons = trimmed.get(layer.name, (0, 0, []))
            prefix = f"harness.layer.{layer.name}."
            attributes[prefix + "tokens"] = layer.tokens
            attributes[prefix + "budget"] = layer.budget
            attributes[prefix + "kept"] = len(layer.kept) - cut
            attributes[prefix + "dropped"] = dropped
            attributes[prefix + "cut"] = cut
            self.tokens.add(layer.tokens, {"harness.layer": layer.name})
            for reason in reasons:
                self.drops.add(1, {"harness.layer": layer.name, "harness.drop.reason": reason})
        if self.capture_content:
            attributes["gen_ai.system_instructions"] = prompt.text
        self.builds.add(1, {"gen_ai.agent.name": build.agent})
        return attributes

    # ------------------------------------------------------------------ loads

    def load_attributes(
        self, result: InstructionSet, *, read: bool, scoped: bool, seconds: float | None
    ) -> Attributes:
        (self.misses if read else self.hits).add(1)
        if read and seconds is not None:
            self.reload.record(seconds)
        attributes: Attributes = {
            "harness.instruction_files.cache_hit": not read,
            "harness.instruction_files.scoped": scoped,
            "harness.instruction_files.files_read": len(result.sources) if read else 0,
            "harness.instruction_files.sources": len(result.sources),
        }
        if self.capture_content:
            attributes["harness.instruction_files.paths"] = [s.path for s in result.sources]
        return attributes

    # ------------------------------------------------------------------ hooks

    def hook_attributes(self, outcome: HookOutcome, phase: str, seconds: float) -> Attributes:
        self.hook_duration.record(seconds, {"harness.hooks.phase": phase})
        attributes: Attributes = {
            "harness.hooks.halted": outcome.halted,
            "harness.hooks.handlers_run": len(outcome.ran),
        }
        if outcome.halted_by is not None:
            attributes["harness.hooks.halted_by"] = outcome.halted_by
        if self.capture_content and outcome.reason is not None:
            attributes["harness.hooks.reason"] = outcome.reason
        return attributes

    def payload_attributes(self, phase: str, payload: Any) -> Attributes:
        attributes: Attributes = {"harness.hooks.phase": phase}
        try:
            name = tool_name(payload)
        except Exception:  # a payload that cannot say: the run itself reports it
            name = None
        if name is not None:
            attributes["gen_ai.tool.name"] = name
        if self.capture_content:
            attributes["harness.hooks.payload"] = repr(payload)
        return attributes

    # ------------------------------------------------------------------ runtime and listener

    def runtime_event(
        self, event: str, supervisor: str, child_id: str, detail: str, *, restart: bool
    ) -> None:
        """One supervisor event: a short span in the caller's trace, carrying it as an event;
        a start that is a ``restart`` is followed by ``child_restarted``."""
        for name in (event, "child_restarted") if restart else (event,):
            attributes: Attributes = {
                "harness.runtime.event": name,
                "harness.runtime._supervisor": supervisor,
                "harness.runtime.child_id": child_id,
            }
            if detail:
                attributes["harness.runtime.detail"] = detail
            self.events.add(1, {"harness.runtime.event": name})
            span = self.tracer.start_span(f"harness.runtime.{name}", attributes=attributes)
            span.add_event(name, attributes)
            span.end()

    def listener_event(self, event: str) -> None:
        if event == "listener_connected":
            self.listener.add(1)
        elif event == "listener_disconnected":
            self.listener.add(-1)
