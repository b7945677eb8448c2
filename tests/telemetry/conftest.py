"""The real OpenTelemetry SDK with in-memory exporters, passed to ``instrument`` per test and
uninstrumented after it: no provider or patch outlives its test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the dev extra installs opentelemetry-sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import harness.telemetry


@dataclass
class Sdk:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = self.exporter.get_finished_spans()
        return [span for span in found if name is None or span.name == name]

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Metric name -> (attributes, value or sum or count) per data point."""
        found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points = found.setdefault(metric.name, [])
                    for point in metric.data.data_points:
                        value = getattr(point, "value", None)
                        if value is None:  # a histogram: how many were recorded
                            value = point.count  # type: ignore[union-attr]
                        points.append((dict(point.attributes or {}), value))
        return found

    def everything(self) -> str:
        """Every name, attribute and event of every span and metric point, as one text."""
        parts = []
        for span in self.spans():
            parts.append(f"{span.name} {dict(span.attributes or {})!r}")
            parts.extend(f"{event.name} {dict(event.attributes or {})!r}" for event in span.events)
        parts.append(repr(self.metrics()))
        return "\n".join(parts)


@pytest.fixture
def instrument() -> Iterator[Callable[..., Sdk]]:
    def start(*, capture_content: bool = False) -> Sdk:
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        meter_provider = MeterProvider(metric_readers=[reader])
        assert harness.telemetry.instrument(
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            capture_content=capture_content,
        )
        return Sdk(exporter, reader)

    try:
        yield start
    finally:
        harness.telemetry.uninstrument()
