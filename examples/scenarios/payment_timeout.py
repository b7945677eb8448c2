"""The PaymentService timeout: readiness before a production change, as one runnable build.

Run: ``python examples/scenarios/payment_timeout.py`` (from the repository root).

A change request asks to raise the timeout from 5 s to 10 s. The README says 30 s, the
client's source default 10 s, the API specification 10 s, an incident 5 s. The decision needs
the effective production value, and only the runtime control plane has authority for it:

1. without the production configuration the build is ``NEEDS_MORE_CONTEXT``;
2. with it (observed five minutes ago, fresh for an hour) it is ``READY``, and the README,
   source and specification are outranked (not rendered);
3. a second runtime configuration saying 7 s makes it ``BLOCKED_BY_CONFLICT``.

Each step prints the readiness, step 2 the debug print's evidence and readiness lines and
the manifest's ``request`` entry.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.scenarios.seeds import (  # the evidence, written once
    ACME,
    excerpt,
    harness,
    production_config,
    timeout_evidence,
    timeout_request,
)
from harness.debug import format_build


async def main() -> dict[str, str]:
    """Run the three steps; returns each step's readiness status."""
    now = datetime.now(UTC)
    statuses: dict[str, str] = {}
    async with harness() as h:
        steps = {
            "without the production config": timeout_evidence(),
            "with it": [*timeout_evidence(), production_config(now=now)],
            "with a second runtime config saying 7 s": [
                *timeout_evidence(),
                production_config(now=now),
                production_config("config/prod/override.yaml", "7", now=now),
            ],
        }
        for name, units in steps.items():
            build = await h.build(
                ACME, agent="reviewer", project_id="acme", request=timeout_request(), evidence=units
            )
            assert build.readiness is not None
            statuses[name] = build.readiness.status
            print(f"== {name}: {build.readiness.status}")
            if name == "with it":
                print(excerpt(format_build(build)))
                recorded = build.prompt.manifest()["request"]
                print(json.dumps({"excluded": recorded["excluded"]}, indent=2))
            if build.readiness.conflicts:
                print(json.dumps({"conflicts": dict(build.readiness.conflicts)}, indent=2))
    return statuses


if __name__ == "__main__":
    anyio.run(main)
