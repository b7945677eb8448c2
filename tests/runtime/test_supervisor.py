"""Supervisor behaviour, following the scenarios of OTP's own supervisor suite."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.runtime import (
    ChildInfo,
    ChildRunning,
    ChildSpec,
    DuplicateChild,
    FailedToStartChild,
    MaxRestartsExceeded,
    Supervisor,
    SupervisorNotRunning,
    UnknownChild,
)
from harness.runtime._supervisor import RestartWindow

NAMES = ["a", "b", "c", "d", "e"]


def logged(caplog: pytest.LogCaptureFixture, event: str) -> list[str]:
    return [
        r.child_id  # type: ignore[attr-defined]
        for r in caplog.records
        if getattr(r, "event", None) == event
    ]


# --------------------------------------------------------------------------- order


async def test_start_order_and_exact_reverse_stop_order_rest_for_one(tracker: Any) -> None:
    with anyio.fail_after(5):
        sup = Supervisor([tracker.spec(n) for n in NAMES], strategy="rest_for_one")
        async with sup:
            # each child started only after the previous one signalled ready
            assert tracker.events == [(k, n) for n in NAMES for k in ("start", "ready")]
            assert sup.which_children() == [ChildInfo(n, "running", 0) for n in NAMES]
            assert sup.count_children() == {
                "specs": 5,
                "active": 5,
                "supervisors": 0,
                "workers": 5,
            }
        assert tracker.of("stop") == list(reversed(NAMES))
        assert [i.status for i in sup.which_children()] == ["stopped"] * 5


# --------------------------------------------------------------------------- strategies


async def test_one_for_one_restarts_only_the_crashed_child(tracker: Any) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec(n) for n in NAMES]) as sup:
            tracker.events.clear()
            tracker.crash("c")
            await tracker.wait_ready("c", 2)
            assert tracker.events == [("exit", "c"), ("start", "c"), ("ready", "c")]
            assert [tracker.starts(n) for n in NAMES] == [1, 1, 2, 1, 1]
            assert [i.restarts for i in sup.which_children()] == [0, 0, 1, 0, 0]


async def test_rest_for_one_restarts_the_crashed_child_and_those_after_it(
    tracker: Any,
) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec(n) for n in NAMES], strategy="rest_for_one") as sup:
            tracker.events.clear()
            tracker.crash("c")
            await tracker.wait_ready("e", 2)
            # later siblings stop in reverse order, then c, d, e start again in order
            assert tracker.events == [
                ("exit", "c"),
                ("stop", "e"),
                ("stop", "d"),
                ("start", "c"),
                ("ready", "c"),
                ("start", "d"),
                ("ready", "d"),
                ("start", "e"),
                ("ready", "e"),
            ]
            # earlier siblings keep their identity (never restarted)
            assert [tracker.starts(n) for n in NAMES] == [1, 1, 2, 2, 2]
            assert [i.restarts for i in sup.which_children()] == [0, 0, 1, 1, 1]
            assert all(i.status == "running" for i in sup.which_children())


async def test_one_for_all_restarts_every_child_in_order(tracker: Any) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec(n) for n in NAMES], strategy="one_for_all") as sup:
            tracker.events.clear()
            tracker.crash("b")
            await tracker.wait_ready("e", 2)
            assert tracker.events == [
                ("exit", "b"),
                *[("stop", n) for n in ["e", "d", "c", "a"]],
                *[(k, n) for n in NAMES for k in ("start", "ready")],
            ]
            assert [tracker.starts(n) for n in NAMES] == [2, 2, 2, 2, 2]
            assert [i.restarts for i in sup.which_children()] == [1] * 5


async def test_one_for_all_drops_temporary_siblings(tracker: Any) -> None:
    with anyio.fail_after(5):
        specs = [tracker.spec("a"), tracker.spec("t", restart="temporary"), tracker.spec("b")]
        async with Supervisor(specs, strategy="one_for_all") as sup:
            tracker.crash("b")
            await tracker.wait_ready("b", 2)
            assert [i.id for i in sup.which_children()] == ["a", "b"]
            assert tracker.starts("t") == 1


# --------------------------------------------------------------------------- restart types

RESTART_CASES = [
    # restart type, exit kind, expected: restarted?, spec kept?
    ("permanent", "normal", True, True),
    ("permanent", "crash", True, True),
    ("transient", "normal", False, True),
    ("transient", "crash", True, True),
    ("temporary", "normal", False, False),
    ("temporary", "crash", False, False),
]


@pytest.mark.parametrize(("restart", "how", "restarted", "kept"), RESTART_CASES)
async def test_restart_types_after_normal_and_abnormal_exit(
    tracker: Any, supervision_log: Any, restart: str, how: str, restarted: bool, kept: bool
) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec("x", restart=restart), tracker.spec("y")]) as sup:
            if how == "crash":
                tracker.crash("x")
            else:
                tracker.exit_normally("x")
            if restarted:
                await tracker.wait_ready("x", 2)
                assert sup.which_children()[0] == ChildInfo("x", "running", 1)
            else:
                await supervision_log.wait("child_terminated", "x")
                ids = [i.id for i in sup.which_children()]
                if kept:
                    assert sup.which_children()[0] == ChildInfo("x", "stopped", 0)
                else:
                    assert ids == ["y"]
                assert tracker.starts("x") == 1
            assert tracker.starts("y") == 1  # the sibling is untouched either way


# --------------------------------------------------------------------------- intensity


async def test_crashes_spread_out_survive_the_sliding_window(tracker: Any) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec("x")], max_restarts=1, max_seconds=0.1) as sup:
            for n in range(2, 6):
                tracker.crash("x")
                await tracker.wait_ready("x", n)
                await anyio.sleep(0.12)  # let the previous restart leave the window
            assert sup.which_children() == [ChildInfo("x", "running", 4)]
            # the history holds timestamps inside the window only, never old exceptions
            assert len(sup._policy.window) <= 1
            assert all(isinstance(t, float) for t in sup._policy.window.times())


@given(
    max_restarts=st.integers(0, 5),
    max_seconds=st.floats(0.01, 10),
    gaps=st.lists(st.floats(0, 5), max_size=60),
)
def test_restart_window_matches_the_sliding_window_model(
    max_restarts: int, max_seconds: float, gaps: list[float]
) -> None:
    window = RestartWindow(max_restarts, max_seconds)
    now = 0.0
    seen: list[float] = []
    for gap in gaps:
        now += gap
        seen.append(now)
        inside = [t for t in seen if now - t < max_seconds]
        assert window.add(now) == (len(inside) <= max_restarts)
        assert len(window) <= max_restarts + 1  # bounded, whatever the history


async def test_burst_escalates_stops_everything_and_leaves_no_task(
    tracker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.runtime")
    with anyio.fail_after(5):
        before = tracker.live_tasks()
        body_finished = False
        sup = Supervisor([tracker.spec(n) for n in "abc"], max_restarts=2, max_seconds=60)
        with pytest.raises(MaxRestartsExceeded) as info:
            async with sup:
                for n in range(2, 4):
                    tracker.crash("b")
                    await tracker.wait_ready("b", n)
                tracker.events.clear()
                tracker.crash("b")  # the third restart within the window: escalate
                await anyio.sleep_forever()
                body_finished = True
        assert not body_finished
        assert info.value.child_id == "b"
        assert isinstance(info.value.reason, tracker.Crash)
        assert tracker.events == [("exit", "b"), ("stop", "c"), ("stop", "a")]
        assert all(i.status == "stopped" for i in sup.which_children())
        assert tracker.live_tasks() == before
        assert logged(caplog, "reached_max_restart_intensity") == ["b"]
        assert logged(caplog, "child_terminated").count("b") == 3


async def test_max_restarts_zero_escalates_on_first_crash(tracker: Any) -> None:
    with anyio.fail_after(5):
        with pytest.raises(MaxRestartsExceeded):
            async with Supervisor([tracker.spec("x")], max_restarts=0):
                tracker.crash("x")
                await anyio.sleep_forever()
        assert tracker.starts("x") == 1


async def test_escalation_while_the_body_is_shielded_still_leaves_the_async_with(
    tracker: Any, supervision_log: Any
) -> None:
    with anyio.fail_after(5):
        with pytest.raises(MaxRestartsExceeded):
            async with Supervisor([tracker.spec("x")], max_restarts=0):
                with anyio.CancelScope(shield=True):
                    tracker.crash("x")
                    await supervision_log.wait("reached_max_restart_intensity", "x")
                # the body finishes normally; the escalation still leaves the async with
        assert tracker.starts("x") == 1


async def test_a_restart_whose_start_keeps_failing_counts_toward_the_limit(
    tracker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.runtime")
    with anyio.fail_after(5):
        with pytest.raises(MaxRestartsExceeded):
            async with Supervisor([tracker.spec("x")], max_restarts=3, max_seconds=60):
                tracker.ctl["x"].fail_starts = 100
                tracker.crash("x")
                await anyio.sleep_forever()
        # one crash, then three failed restart attempts: the fourth restart is refused
        assert tracker.starts("x") == 1 + 3
        assert logged(caplog, "start_error") == ["x"] * 3
        assert logged(caplog, "reached_max_restart_intensity") == ["x"]


async def test_a_restart_that_fails_once_then_succeeds_shows_restarting_meanwhile(
    tracker: Any,
) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec("x"), tracker.spec("y")]) as sup:
            gate = anyio.Event()
            tracker.ctl["x"].start_gate = gate
            tracker.ctl["x"].fail_starts = 1
            tracker.crash("x")
            await tracker.wait_starts("x", 2)
            assert sup.which_children()[0] == ChildInfo("x", "restarting", 0)
            assert sup.count_children()["active"] == 1
            gate.set()
            await tracker.wait_ready("x", 2)
            assert sup.which_children()[0] == ChildInfo("x", "running", 1)
            assert tracker.starts("x") == 3


async def test_rest_for_one_retries_from_the_child_that_failed_to_restart(
    tracker: Any,
) -> None:
    with anyio.fail_after(5):
        async with Supervisor(
            [tracker.spec(n) for n in "abc"], strategy="rest_for_one", max_restarts=5
        ):
            tracker.ctl["b"].fail_starts = 1
            tracker.crash("a")
            await tracker.wait_ready("c", 2)
            # a restarted once, b failed once then started, c started after b
            assert [tracker.starts(n) for n in "abc"] == [2, 3, 2]


# --------------------------------------------------------------------------- start failure


async def test_a_child_failing_at_start_stops_those_already_started_in_reverse(
    tracker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.runtime")
    with anyio.fail_after(5):
        before = tracker.live_tasks()
        specs = [tracker.spec(n) for n in "abcd"]
        tracker.ctl["c"].fail_starts = 1
        body_ran = False
        with pytest.raises(FailedToStartChild) as info:
            async with Supervisor(specs):
                body_ran = True
        assert not body_ran
        assert info.value.id == "c"
        assert isinstance(info.value.cause, tracker.StartFailure)
        assert tracker.of("start") == ["a", "b", "c"]  # d never started
        assert tracker.of("stop") == ["b", "a"]
        assert logged(caplog, "start_error") == ["c"]
        assert tracker.live_tasks() == before


async def test_start_returning_without_ready_is_a_start_failure() -> None:
    async def quits(task_status: Any) -> None:
        return None

    async def group_failure(task_status: Any) -> None:
        async with anyio.create_task_group():
            raise KeyError("inner")

    with anyio.fail_after(5):
        with pytest.raises(FailedToStartChild) as info:
            async with Supervisor([ChildSpec("q", quits)]):
                pass
        assert isinstance(info.value.cause, RuntimeError)
        assert "task_status.started()" in str(info.value.cause)
        with pytest.raises(FailedToStartChild) as info:
            async with Supervisor([ChildSpec("g", group_failure)]):
                pass
        # the child's own single-error exception group is unwrapped inside its wrapper
        assert isinstance(info.value.cause, KeyError)


# --------------------------------------------------------------------------- stopping


async def test_a_child_that_swallows_cancellation_is_abandoned_after_its_timeout(
    tracker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.runtime")
    release = anyio.Event()
    finished = anyio.Event()

    async def stubborn(task_status: Any) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):  # swallows cancellation until released
                await release.wait()
            finished.set()

    with anyio.fail_after(5):
        sup = Supervisor(
            [tracker.spec("a"), ChildSpec("stubborn", stubborn, shutdown=0.2), tracker.spec("b")]
        )
        async with sup:
            started = anyio.current_time()
        elapsed = anyio.current_time() - started
        assert 0.19 <= elapsed < 2.0  # about its shutdown timeout, then stop completed
        assert tracker.of("stop") == ["b", "a"]
        assert logged(caplog, "shutdown_error") == ["stubborn"]
        assert not finished.is_set()  # it was abandoned, not awaited
        release.set()
        await finished.wait()


async def test_brutal_shutdown_does_not_wait(tracker: Any) -> None:
    release = anyio.Event()
    finished = anyio.Event()

    async def stubborn(task_status: Any) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await release.wait()
            finished.set()

    with anyio.fail_after(5):
        async with Supervisor([ChildSpec("s", stubborn, shutdown="brutal")]):
            pass
        assert not finished.is_set()
        release.set()
        await finished.wait()


async def test_shutdown_none_waits_for_a_slow_cleanup(tracker: Any) -> None:
    cleaned = anyio.Event()

    async def slow(task_status: Any) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.05)
            cleaned.set()

    with anyio.fail_after(5):
        async with Supervisor([ChildSpec("slow", slow, shutdown=None)]):
            pass
        assert cleaned.is_set()


async def test_stopping_while_children_exit_on_their_own(
    tracker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.runtime")

    async def on_c_cancel() -> None:
        # while c is being stopped, b crashes and a exits normally, on their own
        tracker.crash("b")
        tracker.exit_normally("a")

    with anyio.fail_after(5):
        specs = [tracker.spec("a"), tracker.spec("b"), tracker.spec("c", on_cancel=on_c_cancel)]
        async with Supervisor(specs) as sup:
            pass
        assert ("exit", "a") in tracker.events and ("exit", "b") in tracker.events
        assert [tracker.starts(n) for n in "abc"] == [1, 1, 1]  # nothing restarted
        assert all(i.status == "stopped" for i in sup.which_children())
        assert "b" not in logged(caplog, "child_started")[3:]


# --------------------------------------------------------------------------- cancellation


async def test_outside_cancellation_propagates_and_restarts_nothing(tracker: Any) -> None:
    async def crash_on_the_way_out() -> None:
        raise RuntimeError("cleanup failed")

    with anyio.fail_after(5):
        before = tracker.live_tasks()
        specs = [tracker.spec("a"), tracker.spec("b", on_cancel=crash_on_the_way_out)]
        reached = False
        with anyio.CancelScope() as outer:
            async with Supervisor(specs, max_restarts=100):
                outer.cancel()
                await anyio.sleep_forever()
            reached = True
        assert outer.cancelled_caught
        assert not reached
        assert tracker.of("stop") == ["b", "a"]
        assert [tracker.starts(n) for n in "ab"] == [1, 1]
        assert tracker.live_tasks() == before


async def test_outside_timeout_propagates_while_a_child_restarts(tracker: Any) -> None:
    with anyio.fail_after(5):
        gate = anyio.Event()  # never set: the restart hangs in start
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0.1):
                async with Supervisor([tracker.spec("x"), tracker.spec("y")]):
                    tracker.ctl["x"].start_gate = gate
                    tracker.crash("x")
                    await anyio.sleep_forever()
        assert tracker.starts("x") == 2  # the hanging restart was abandoned, not retried
        assert tracker.of("stop") == ["y"]


async def test_an_error_in_the_body_propagates_unwrapped(tracker: Any) -> None:
    with anyio.fail_after(5):
        with pytest.raises(ValueError, match="body"):
            async with Supervisor([tracker.spec("a"), tracker.spec("b")]):
                raise ValueError("body")
        assert tracker.of("stop") == ["b", "a"]


# --------------------------------------------------------------------------- nesting


async def test_nested_supervisors_start_in_order_and_stop_in_reverse(tracker: Any) -> None:
    with anyio.fail_after(5):
        inner = Supervisor([tracker.spec("x"), tracker.spec("y")])
        outer = Supervisor([tracker.spec("a"), inner.child_spec("inner"), tracker.spec("b")])
        async with outer:
            assert tracker.of("ready") == ["a", "x", "y", "b"]
            assert outer.count_children() == {
                "specs": 3,
                "active": 3,
                "supervisors": 1,
                "workers": 2,
            }
            tracker.crash("y")  # handled inside the inner supervisor only
            await tracker.wait_ready("y", 2)
            assert outer.which_children()[1] == ChildInfo("inner", "running", 0)
            assert inner.which_children()[1] == ChildInfo("y", "running", 1)
        assert tracker.of("stop") == ["b", "y", "x", "a"]


async def test_nested_escalation_reaches_the_parent_as_an_abnormal_exit(
    tracker: Any, supervision_log: Any
) -> None:
    with anyio.fail_after(5):
        inner = Supervisor([tracker.spec("x"), tracker.spec("y")], max_restarts=0)
        outer = Supervisor([tracker.spec("a"), inner.child_spec("inner"), tracker.spec("b")])
        async with outer:
            tracker.crash("x")
            await supervision_log.wait("child_started", "inner", 2)
            assert supervision_log.count("child_terminated", "inner") == 1
            # the parent restarted the whole inner supervisor; its siblings kept identity
            assert outer.which_children()[1] == ChildInfo("inner", "running", 1)
            assert [tracker.starts(n) for n in "abxy"] == [1, 1, 2, 2]
            assert inner.which_children() == [
                ChildInfo("x", "running", 0),
                ChildInfo("y", "running", 0),
            ]


async def test_escalation_climbs_to_the_top(tracker: Any) -> None:
    with anyio.fail_after(5):
        inner = Supervisor([tracker.spec("x")], max_restarts=0)
        outer = Supervisor([inner.child_spec("inner"), tracker.spec("b")], max_restarts=0)
        with pytest.raises(MaxRestartsExceeded) as info:
            async with outer:
                tracker.crash("x")
                await anyio.sleep_forever()
        assert info.value.child_id == "inner"
        assert isinstance(info.value.reason, MaxRestartsExceeded)
        assert tracker.of("stop") == ["b"]


async def test_a_nested_supervisor_failing_to_start_fails_the_parent(tracker: Any) -> None:
    with anyio.fail_after(5):
        inner = Supervisor([tracker.spec("x")])
        tracker.ctl["x"].fail_starts = 1
        with pytest.raises(FailedToStartChild) as info:
            async with Supervisor([tracker.spec("a"), inner.child_spec("inner")]):
                pass
        assert info.value.id == "inner"
        assert isinstance(info.value.cause, FailedToStartChild)
        assert info.value.cause.id == "x"
        assert tracker.of("stop") == ["a"]


# --------------------------------------------------------------------------- admin calls


async def test_start_child_appends_and_stops_first(tracker: Any) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec("a")]) as sup:
            await sup.start_child(tracker.spec("b"))
            assert sup.which_children() == [
                ChildInfo("a", "running", 0),
                ChildInfo("b", "running", 0),
            ]
            with pytest.raises(DuplicateChild, match="'b'"):
                await sup.start_child(tracker.spec("b"))
            failing = tracker.spec("c")
            tracker.ctl["c"].fail_starts = 1
            with pytest.raises(FailedToStartChild) as info:
                await sup.start_child(failing)
            assert isinstance(info.value.cause, tracker.StartFailure)
            assert [i.id for i in sup.which_children()] == ["a", "b"]  # not added
            tracker.crash("b")  # dynamically added children are supervised too
            await tracker.wait_ready("b", 2)
        assert tracker.of("stop") == ["b", "a"]


async def test_terminate_restart_and_delete_child(tracker: Any) -> None:
    with anyio.fail_after(5):
        specs = [tracker.spec("a"), tracker.spec("b"), tracker.spec("t", restart="temporary")]
        async with Supervisor(specs) as sup:
            with pytest.raises(ChildRunning, match="terminate_child"):
                await sup.restart_child("b")
            with pytest.raises(ChildRunning):
                await sup.delete_child("b")
            await sup.terminate_child("b")
            assert tracker.of("stop") == ["b"]
            assert sup.which_children()[1] == ChildInfo("b", "stopped", 0)
            assert sup.count_children()["active"] == 2
            await sup.terminate_child("b")  # terminating a stopped child is a no-op
            await sup.restart_child("b")
            assert sup.which_children()[1] == ChildInfo("b", "running", 1)
            assert tracker.starts("b") == 2
            await sup.terminate_child("b")
            await sup.delete_child("b")
            assert [i.id for i in sup.which_children()] == ["a", "t"]
            await sup.terminate_child("t")  # a terminated temporary child is forgotten
            assert [i.id for i in sup.which_children()] == ["a"]
            for call in (sup.terminate_child, sup.restart_child, sup.delete_child):
                with pytest.raises(UnknownChild, match="known ids: \\['a'\\]"):
                    await call("nope")
            await sup.start_child(tracker.spec("b"))  # the id is free again after delete


async def test_restart_child_that_fails_to_start_stays_stopped(tracker: Any) -> None:
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec("a")]) as sup:
            await sup.terminate_child("a")
            tracker.ctl["a"].fail_starts = 1
            with pytest.raises(FailedToStartChild):
                await sup.restart_child("a")
            assert sup.which_children() == [ChildInfo("a", "stopped", 0)]


async def test_admin_calls_outside_the_async_with(tracker: Any) -> None:
    with anyio.fail_after(5):
        sup = Supervisor([tracker.spec("a")])
        assert sup.which_children() == [ChildInfo("a", "stopped", 0)]
        with pytest.raises(SupervisorNotRunning):
            await sup.start_child(tracker.spec("b"))
        with pytest.raises(SupervisorNotRunning):
            await sup.terminate_child("a")
        async with sup:
            with pytest.raises(RuntimeError, match="already running"):
                await sup.__aenter__()
        with pytest.raises(SupervisorNotRunning):
            await sup.restart_child("a")
        async with sup:  # re-entering starts again from the initial children
            assert sup.which_children() == [ChildInfo("a", "running", 0)]
        assert tracker.starts("a") == 2


def test_spec_and_supervisor_validation() -> None:
    async def start(task_status: Any) -> None:
        task_status.started()

    with pytest.raises(ValueError, match="restart"):
        ChildSpec("x", start, restart="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="shutdown"):
        ChildSpec("x", start, shutdown=-1)
    with pytest.raises(ValueError, match="shutdown"):
        ChildSpec("x", start, shutdown="soon")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="id"):
        ChildSpec("", start)
    with pytest.raises(TypeError):
        ChildSpec("x", "not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="strategy"):
        Supervisor([], strategy="all_for_one")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_restarts"):
        Supervisor([], max_restarts=-1)
    with pytest.raises(ValueError, match="max_seconds"):
        Supervisor([], max_seconds=0)
    with pytest.raises(DuplicateChild):
        Supervisor([ChildSpec("x", start), ChildSpec("x", start)])
    spec = ChildSpec("x", start)
    assert (spec.restart, spec.shutdown) == ("permanent", 5.0)


async def test_logging_uses_otp_event_names(tracker: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="harness.runtime")
    with anyio.fail_after(5):
        async with Supervisor([tracker.spec("a")]):
            tracker.crash("a")
            await tracker.wait_ready("a", 2)
        assert logged(caplog, "child_started") == ["a", "a"]
        terminated = [r for r in caplog.records if getattr(r, "event", None) == "child_terminated"]
        assert terminated[0].levelno == logging.ERROR
        assert terminated[0].getMessage().startswith("child_terminated supervisor=")
        assert "Crash(a)" in terminated[0].getMessage()


# --------------------------------------------------------------------------- anyio traps


async def test_cancelled_while_starting_stops_the_started_ones_in_reverse(tracker: Any) -> None:
    with anyio.fail_after(5):
        before = tracker.live_tasks()
        specs = [tracker.spec(n) for n in "abc"]
        tracker.ctl["b"].start_gate = anyio.Event()  # b never becomes ready
        with anyio.CancelScope() as outer:
            async with anyio.create_task_group() as tg:

                async def cancel_when_b_starts() -> None:
                    await tracker.wait_starts("b", 1)
                    outer.cancel()

                tg.start_soon(cancel_when_b_starts)
                async with Supervisor(specs):
                    pytest.fail("the body must not run")
        assert outer.cancelled_caught
        assert tracker.of("ready") == ["a"]
        assert tracker.of("stop") == ["a"]
        assert tracker.starts("c") == 0
        assert tracker.live_tasks() == before


async def test_a_child_raising_an_exception_group_never_reaches_the_host(tracker: Any) -> None:
    crashed = anyio.Event()
    starts = 0

    async def grouped(task_status: Any) -> None:
        nonlocal starts
        starts += 1
        task_status.started()
        if starts == 1:
            async with anyio.create_task_group() as tg:

                async def fail(n: int) -> None:
                    raise ValueError(n)

                tg.start_soon(fail, 1)
                tg.start_soon(fail, 2)
        crashed.set()
        await anyio.sleep_forever()

    with anyio.fail_after(5):
        async with Supervisor([ChildSpec("g", grouped)]) as sup:
            await crashed.wait()
            assert sup.which_children() == [ChildInfo("g", "running", 1)]


async def test_escalation_through_a_task_group_in_the_body_is_not_wrapped(
    tracker: Any,
) -> None:
    with anyio.fail_after(5):
        with pytest.raises(MaxRestartsExceeded):
            async with (
                Supervisor([tracker.spec("x")], max_restarts=0),
                anyio.create_task_group() as tg,
            ):
                tg.start_soon(anyio.sleep_forever)
                tracker.crash("x")
                await anyio.sleep_forever()


@pytest.fixture
async def running_supervisor(tracker: Any) -> Any:
    # pytest-asyncio runs a fixture's setup and teardown in different tasks
    async with Supervisor([tracker.spec("a"), tracker.spec("b")]) as sup:
        yield sup
    assert tracker.of("stop") == ["b", "a"]


async def test_usable_from_an_async_fixture(running_supervisor: Any, tracker: Any) -> None:
    with anyio.fail_after(5):
        assert running_supervisor.count_children()["active"] == 2
        tracker.crash("a")
        await tracker.wait_ready("a", 2)
