"""The two seed scenarios as evidence units, at a fixed clock: the PaymentService timeout and
the parser repair. The units are the runnable examples' own (``examples/scenarios/seeds.py``);
only the clock and the secret are the tests'."""

from __future__ import annotations

from datetime import UTC, datetime

from examples.scenarios import seeds
from examples.scenarios.seeds import AUTHORITY, CLAIM, parser_request, timeout_request
from harness.prompt_assembler import Unit

__all__ = [
    "AUTHORITY",
    "CLAIM",
    "NOW",
    "SECRET",
    "parser_evidence",
    "parser_request",
    "production_config",
    "timeout_evidence",
    "timeout_request",
]

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SECRET = "DATABASE_URL=postgres://secret"
timeout_evidence = seeds.timeout_evidence


def production_config(
    uid: str = "config/prod/payment.yaml", seconds: str = "5", *, observed: datetime = NOW
) -> Unit:
    """The runtime control plane's value, read five minutes before ``observed``."""
    return seeds.production_config(uid, seconds, now=observed)


def parser_evidence() -> list[Unit]:
    """Issue 842 (untrusted), .env.production (a secret), the r39 summary (expired)."""
    return seeds.parser_evidence(NOW, SECRET)
