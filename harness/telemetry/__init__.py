"""OpenTelemetry spans, events and metrics for harness's context pipeline, off by default.

An engine that already exports traces wires harness in once, with its own providers::

    from opentelemetry.sdk.trace import TracerProvider
    import harness.telemetry

    provider = TracerProvider()
    harness.telemetry.instrument(tracer_provider=provider)   # False without opentelemetry-api
    ...                                                       # builds, loads, hooks: spans
    harness.telemetry.uninstrument()                          # back to emitting nothing

Until ``instrument`` is called, harness does not import ``opentelemetry`` and its code runs
exactly as without this module: instrumenting swaps traced versions in for a few methods
(``Harness.build``, the instruction-file loads, ``Hooks.run``, command hooks, the supervisors'
and the PostgreSQL listener's event log), and ``uninstrument`` puts the originals back. So the
hot paths carry no check at all when nothing is instrumented. The runtime's events go through
the very function that logs them: one mechanism, the log line and the span event together.

No unit text, prompt text, hook payload or halt reason is put in telemetry unless
``capture_content=True``. Every span, attribute and metric name is listed in
docs/telemetry.md.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["instrument", "instrumented", "uninstrument"]

logger = logging.getLogger(__name__)

_installed: list[Any] = []  # the patches of the current instrumentation (empty: not instrumented)


def instrument(
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    capture_content: bool = False,
) -> bool:
    """Emit spans, events and metrics through ``tracer_provider`` and ``meter_provider``
    (``None``: OpenTelemetry's global providers); ``True`` once instrumented.

    Without ``opentelemetry-api`` installed (``pip install 'harness[otel]'``) nothing is
    instrumented, a warning is logged and ``False`` is returned: telemetry never breaks a
    build. Calling it again replaces the previous instrumentation (its providers and
    ``capture_content``).
    """
    try:  # the first import of opentelemetry in harness
        from harness.telemetry._patches import install
        from harness.telemetry._signals import Signals
    except ImportError as exc:
        logger.warning(
            "harness.telemetry.instrument: opentelemetry-api cannot be imported (%s), nothing "
            "will be emitted; install it with: pip install 'harness[otel]'",
            exc,
        )
        return False

    uninstrument()
    signals = Signals(tracer_provider, meter_provider, capture_content=capture_content)
    _installed.extend(install(signals))
    return True


def uninstrument() -> None:
    """Stop emitting: the original methods are back (a no-op when not instrumented)."""
    while _installed:
        _installed.pop().restore()


def instrumented() -> bool:
    """Whether ``instrument`` is in effect."""
    return bool(_installed)
