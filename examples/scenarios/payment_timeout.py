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
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness import (  # noqa: E402
    EXTENDED_LAYOUT,
    ContextRequest,
    Harness,
    HarnessConfig,
    Requirement,
    Unit,
)
from harness.debug import format_build  # noqa: E402

CLAIM = "timeout.production"
AUTHORITY = ["runtime_control_plane", "incident", "specification", "source_code", "documentation"]


def said(uid: str, text: str, kind: str, value: str, authority: str) -> Unit:
    return Unit(uid, text, source=uid, kind=kind, claim=CLAIM, value=value, authority=authority)


def evidence() -> list[Unit]:
    """README 30 s, source default 10 s, spec 10 s, incident 5 s."""
    return [
        said("README.md", "PaymentService times out after 30 s.", "documentation", "30",
             "documentation"),
        said("src/payment/client.py", "DEFAULT_TIMEOUT = 10", "source_default", "10",
             "source_code"),
        said("api/payment.yaml", "timeout: 10s", "api_spec", "10", "specification"),
        said("incidents/INC-2211.md", "Cut to 5 s: the provider saturated.", "incident", "5",
             "incident"),
    ]  # fmt: skip


def production(uid: str, seconds: str, now: datetime) -> Unit:
    """The configuration owner's answer: the runtime control plane, read five minutes ago."""
    return Unit(
        uid,
        f"payment.timeout: {seconds}s",
        source=uid,
        kind="effective_config",
        claim=CLAIM,
        value=seconds,
        authority="runtime_control_plane",
        observed_at=now - timedelta(minutes=5),
        max_age=3600,
    )


REQUEST = ContextRequest(
    "raise the PaymentService timeout from 5 s to 10 s",
    action="change_production_config",
    requirements=[
        Requirement("effective_config", claim=CLAIM),
        Requirement("incident", required=False),
    ],
    authority={CLAIM: AUTHORITY},
)


def excerpt(report: str) -> str:
    """The debug print's evidence layer and readiness lines."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("evidence"))
    picked = [line for line in lines[start:] if line.startswith(("readiness", "removed"))]
    return "\n".join([*lines[start : start + 2], *picked])


async def main() -> dict[str, str]:
    """Run the three steps; returns each step's readiness status."""
    now = datetime.now(UTC)
    statuses: dict[str, str] = {}
    config = HarnessConfig(layout=EXTENDED_LAYOUT)
    async with Harness(config, database=ROOT / "examples" / "acme.db") as h:
        steps = {
            "without the production config": evidence(),
            "with it": [*evidence(), production("config/prod/payment.yaml", "5", now)],
            "with a second runtime config saying 7 s": [
                *evidence(),
                production("config/prod/payment.yaml", "5", now),
                production("config/prod/override.yaml", "7", now),
            ],
        }
        for name, units in steps.items():
            build = await h.build(
                ROOT / "examples" / "acme",
                agent="reviewer",
                project_id="acme",
                request=REQUEST,
                evidence=units,
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
