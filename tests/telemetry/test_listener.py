"""The PostgreSQL change-notice listener's connections, counted from its own event log, on a
real server (``HARNESS_TEST_POSTGRES_URL``, as for tests/postgres; skips without one)."""

from __future__ import annotations

import os
from collections.abc import Callable

import anyio
import pytest

from tests.telemetry.conftest import Sdk

pytest.importorskip("asyncpg", reason="the postgres extra installs asyncpg")

from harness.instruction_files.stores.postgres import PostgresInstructionStore
from harness.runtime import Supervisor
from tests.postgres.support import URL_VARIABLE, Recorder, unavailable, until


async def test_listener_connected_goes_up_then_down(instrument: Callable[..., Sdk]) -> None:
    url = os.environ.get(URL_VARIABLE)
    if not url:
        unavailable(f"{URL_VARIABLE} is not set")
    sdk = instrument()
    store = PostgresInstructionStore(str(url), timeout=5, heartbeat=5.0)
    with anyio.fail_after(30):
        try:
            async with Supervisor(list(store.child_specs(Recorder()))):
                await until(lambda: store.cache_rows)
                assert sdk.metrics()["harness.instruction_files.listener.connected"] == [({}, 1)]
        finally:
            await store.aclose()
    assert sdk.metrics()["harness.instruction_files.listener.connected"] == [({}, 0)]
