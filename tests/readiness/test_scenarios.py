"""The seed scenarios run as users run them (examples/scenarios/*.py in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


def _run(name: str) -> str:
    env = {key: value for key, value in os.environ.items() if key != "HARNESS_CONFIG"}
    done = subprocess.run(
        [sys.executable, str(SCENARIOS / name)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_payment_timeout_waits_for_the_owner_then_blocks_on_a_conflict() -> None:
    out = _run("payment_timeout.py")
    assert "== without the production config: NEEDS_MORE_CONTEXT" in out
    assert "== with it: READY" in out
    assert "== with a second runtime config saying 7 s: BLOCKED_BY_CONFLICT" in out
    assert "kept     incidents/INC-2211.md, config/prod/payment.yaml" in out
    for source in ("README.md", "src/payment/client.py", "api/payment.yaml"):
        assert f"removed    {source} (evidence): outranked" in out
    assert '"config/prod/payment.yaml",\n      "config/prod/override.yaml"' in out


def test_the_parser_repair_denies_the_secret_and_rejects_the_stale_summary() -> None:
    out = _run("parser_repair.py")
    assert "== parser repair: NEEDS_MORE_CONTEXT" in out
    assert "  source_summary [required]: stale (summary-r39)" in out
    assert "removed    .env.production (evidence): denied" in out
    assert "kept     issue-842" in out
    assert "secret in the prompt, the manifest or the store: no" in out
    assert "hunter2" not in out
