"""Supervisor events reach telemetry through the function that logs them: one call, the log
record and the span together."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
import pytest

from harness.runtime import ChildSpec, MaxRestartsExceeded, Supervisor
from tests.telemetry.conftest import Sdk


async def crasher(task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    task_status.started()
    raise RuntimeError("boom")


async def test_start_exit_restart_and_max_restarts(
    instrument: Callable[..., Sdk], caplog: pytest.LogCaptureFixture
) -> None:
    sdk = instrument()
    caplog.set_level(logging.DEBUG, logger="harness.runtime")
    with anyio.fail_after(20), pytest.raises(MaxRestartsExceeded):
        async with Supervisor([ChildSpec("crasher", crasher)], max_restarts=2):
            await anyio.sleep_forever()
    names = [span.name for span in sdk.spans() if span.name.startswith("harness.runtime.")]
    assert names.count("harness.runtime.child_started") == 3
    assert names.count("harness.runtime.child_restarted") == 2
    assert names.count("harness.runtime.child_terminated") == 3
    assert names.count("harness.runtime.reached_max_restart_intensity") == 1
    (limit,) = sdk.spans("harness.runtime.reached_max_restart_intensity")
    attributes = dict(limit.attributes or {})
    assert attributes["harness.runtime._supervisor"] == "supervisor"
    assert attributes["harness.runtime.child_id"] == "crasher"
    assert [event.name for event in limit.events] == ["reached_max_restart_intensity"]
    logged = [getattr(record, "event", None) for record in caplog.records]
    spans = [name.removeprefix("harness.runtime.") for name in names]
    assert [name for name in spans if name != "child_restarted"] == [
        event for event in logged if event is not None
    ]
    counted = {
        point[0]["harness.runtime.event"]: point[1]
        for point in sdk.metrics()["harness.runtime.events"]
    }
    assert counted["child_restarted"] == 2
