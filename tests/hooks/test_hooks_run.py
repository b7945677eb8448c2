"""Running a chain: order, halting, rewriting, matching, handler forms and odd results."""

from __future__ import annotations

import dataclasses
import functools
import gc
import re
import types
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from harness.hooks import Halt, HookOutcome, HookResultError, Hooks
from harness.hooks._outcome import outcome


def recorder(calls: list[str], label: str) -> Any:
    def handler(payload: Any) -> None:
        calls.append(label)

    return handler


def async_recorder(calls: list[str], label: str) -> Any:
    async def handler(payload: Any) -> None:
        await anyio.lowlevel.checkpoint()
        calls.append(label)

    return handler


async def test_an_empty_phase_returns_the_payload_untouched() -> None:
    with anyio.fail_after(5):
        payload = {"tool_name": "Bash"}
        outcome = await Hooks().run("pre_tool_use", payload)
        assert outcome == HookOutcome(False, None, None, payload, (), None)
        assert outcome.payload is payload


async def test_handlers_run_one_at_a_time_in_registration_order() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        hooks = Hooks()
        for i, make in enumerate([recorder, async_recorder] * 4):
            hooks = hooks.register("pre_tool_use", make(calls, f"h{i}"), name=f"h{i}")
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        expected = [f"h{i}" for i in range(8)]
        # Not last-registered-first as in pluggy, and not interleaved/parallel.
        assert calls == expected
        assert outcome.ran == tuple(expected)
        assert not outcome.halted


async def test_handlers_do_not_overlap_even_when_they_suspend() -> None:
    with anyio.fail_after(5):
        active = 0
        peak = 0

        async def slow(payload: Any) -> None:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await anyio.sleep(0.001)
            active -= 1

        hooks = Hooks()
        for i in range(5):
            hooks = hooks.register("pre_tool_use", slow, name=f"slow{i}")
        outcome = await hooks.run("pre_tool_use", {})
        assert peak == 1
        assert len(outcome.ran) == 5


async def test_only_the_requested_phase_runs() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        hooks = Hooks()
        for phase in ("pre_tool_use", "post_tool_use", "session_start", "session_end"):
            hooks = hooks.register(phase, recorder(calls, phase), name=phase)
        outcome = await hooks.run("session_start", {"session": 1})
        assert calls == ["session_start"]
        assert outcome.ran == ("session_start",)


async def test_the_first_halt_stops_the_chain_and_is_attributed() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        def no_rm_rf(payload: dict[str, Any]) -> Halt | None:
            calls.append("no_rm_rf")
            if "rm -rf" in payload["tool_input"]["command"]:
                return Halt("rm -rf is not allowed")
            return None

        def also_halts(payload: Any) -> Halt:
            calls.append("also_halts")
            return Halt("second opinion")

        hooks = (
            Hooks()
            .register("pre_tool_use", recorder(calls, "before"), name="before")
            .register("pre_tool_use", no_rm_rf)
            .register("pre_tool_use", also_halts)
            .register("pre_tool_use", recorder(calls, "after"), name="after")
        )
        payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
        outcome = await hooks.run("pre_tool_use", payload)
        assert outcome.halted
        assert outcome.reason == "rm -rf is not allowed"
        assert (
            outcome.halted_by
            == "test_the_first_halt_stops_the_chain_and_is_attributed.<locals>.no_rm_rf"
        )
        assert outcome.ran == ("before", outcome.halted_by)
        assert outcome.error is None
        assert outcome.payload is payload
        assert calls == ["before", "no_rm_rf"]  # later handlers never run

        safe = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
        outcome = await hooks.run("pre_tool_use", safe)
        assert outcome.halted_by is not None and outcome.halted_by.endswith("also_halts")
        assert outcome.reason == "second opinion"


async def test_an_async_handler_can_halt() -> None:
    with anyio.fail_after(5):

        async def deny(payload: Any) -> Halt:
            await anyio.lowlevel.checkpoint()
            return Halt("async says no")

        after: list[str] = []
        hooks = (
            Hooks()
            .register("pre_tool_use", deny, name="deny")
            .register("pre_tool_use", recorder(after, "after"))
        )
        outcome = await hooks.run("pre_tool_use", {})
        assert (outcome.halted, outcome.halted_by, outcome.reason) == (
            True,
            "deny",
            "async says no",
        )
        assert after == []


async def test_a_rewrite_is_what_the_next_handler_sees() -> None:
    with anyio.fail_after(5):
        seen: list[dict[str, Any]] = []

        def add_dry_run(payload: dict[str, Any]) -> dict[str, Any]:
            seen.append(payload)
            command = payload["tool_input"]["command"]
            return {**payload, "tool_input": {"command": command + " --dry-run"}}

        async def add_timeout(payload: dict[str, Any]) -> dict[str, Any]:
            seen.append(payload)
            return {**payload, "timeout": 30}

        def look(payload: dict[str, Any]) -> None:
            seen.append(payload)

        hooks = (
            Hooks()
            .register("pre_tool_use", add_dry_run)
            .register("pre_tool_use", add_timeout)
            .register("pre_tool_use", look)
        )
        original = {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
        outcome = await hooks.run("pre_tool_use", original)
        expected = {
            "tool_name": "Bash",
            "tool_input": {"command": "make deploy --dry-run"},
            "timeout": 30,
        }
        assert outcome.payload == expected
        assert seen[0] is original
        assert seen[1] == {"tool_name": "Bash", "tool_input": {"command": "make deploy --dry-run"}}
        assert seen[2] is outcome.payload  # None means "unchanged": the same object is passed on
        assert original == {"tool_name": "Bash", "tool_input": {"command": "make deploy"}}
        assert not outcome.halted


async def test_rewrite_then_halt_reports_the_rewritten_payload() -> None:
    with anyio.fail_after(5):

        def rewrite(payload: dict[str, Any]) -> dict[str, Any]:
            return {**payload, "tool_input": {"command": "rm -rf ./build"}}

        def halt_on_rm(payload: dict[str, Any]) -> Halt | None:
            if payload["tool_input"]["command"].startswith("rm -rf"):
                return Halt("rm -rf is not allowed")
            return None

        hooks = Hooks().register("pre_tool_use", rewrite).register("pre_tool_use", halt_on_rm)
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash", "tool_input": {}})
        assert (
            outcome.halted
            and outcome.halted_by
            == "test_rewrite_then_halt_reports_the_rewritten_payload.<locals>.halt_on_rm"
        )
        assert outcome.payload == {"tool_name": "Bash", "tool_input": {"command": "rm -rf ./build"}}
        assert outcome.ran == (
            "test_rewrite_then_halt_reports_the_rewritten_payload.<locals>.rewrite",
            outcome.halted_by,
        )


def constant(value: object, payload: Any) -> object:
    return value


async def test_falsy_values_other_than_none_are_new_payloads() -> None:
    with anyio.fail_after(5):
        values: tuple[object, ...] = ({}, [], "", 0)
        for value in values:
            hooks = Hooks().register("post_tool_use", functools.partial(constant, value))
            outcome = await hooks.run("post_tool_use", {"tool_name": "Bash"})
            assert outcome.payload == value and not outcome.halted


async def test_the_same_function_registered_twice_runs_twice() -> None:
    with anyio.fail_after(5):
        counter: list[int] = []

        def count(payload: Any) -> None:
            counter.append(1)

        hooks = Hooks().register("pre_tool_use", count).register("pre_tool_use", count)
        outcome = await hooks.run("pre_tool_use", {})
        assert len(counter) == 2
        assert (
            outcome.ran
            == ("test_the_same_function_registered_twice_runs_twice.<locals>.count",) * 2
        )


async def test_the_old_value_never_calls_a_handler_registered_on_the_new_one() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        old = Hooks().register("pre_tool_use", recorder(calls, "old"), name="old")
        new = old.register("pre_tool_use", recorder(calls, "new"), name="new")
        assert (await old.run("pre_tool_use", {})).ran == ("old",)
        assert calls == ["old"]
        assert (await new.run("pre_tool_use", {})).ran == ("old", "new")
        assert calls == ["old", "old", "new"]


async def test_a_handler_registered_during_a_run_does_not_join_that_run() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        hooks = Hooks()

        def late(payload: Any) -> None:
            calls.append("late")

        async def registers_more(payload: Any) -> None:
            nonlocal hooks
            calls.append("registers_more")
            hooks = hooks.register("pre_tool_use", late)  # rebinding, as user code would
            hooks.register("pre_tool_use", late)  # and a discarded registration
            await anyio.lowlevel.checkpoint()

        hooks = hooks.register("pre_tool_use", registers_more, name="registers_more")
        running = hooks
        outcome = await running.run("pre_tool_use", {})
        assert outcome.ran == ("registers_more",)
        assert calls == ["registers_more"]
        assert running.registrations("pre_tool_use")[-1].name == "registers_more"
        # The new value does hold it, for the next run.
        assert [r.name for r in hooks.registrations("pre_tool_use")][-1].endswith("late")


# --- handler forms -----------------------------------------------------------------------


class AsyncCallable:
    async def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        await anyio.lowlevel.checkpoint()
        return {**payload, "by": "AsyncCallable"}


class SyncCallable:
    def __call__(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "by": "SyncCallable"}


class Methods:
    async def rewrite(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "by": "Methods.rewrite"}


async def tag(payload: dict[str, Any], *, by: str) -> dict[str, Any]:
    await anyio.lowlevel.checkpoint()
    return {**payload, "by": by}


def returns_awaitable(payload: dict[str, Any]) -> Awaitable[dict[str, Any]]:
    return tag(payload, by="returns_awaitable")


class FutureLike:
    """A non-coroutine awaitable."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Any:
        yield from ()
        return self.value


@pytest.mark.parametrize(
    ("handler", "by"),
    [
        (AsyncCallable(), "AsyncCallable"),
        (SyncCallable(), "SyncCallable"),
        (Methods().rewrite, "Methods.rewrite"),
        (functools.partial(tag, by="partial"), "partial"),
        (returns_awaitable, "returns_awaitable"),
        (lambda p: FutureLike({**p, "by": "future"}), "future"),
    ],
)
async def test_every_handler_form_can_rewrite(handler: Any, by: str) -> None:
    with anyio.fail_after(5):
        hooks = Hooks().register("pre_tool_use", handler)
        hooks = hooks.register("pre_tool_use", handler, timeout=5)  # the timed path as well
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.payload == {"tool_name": "Bash", "by": by}
        assert not outcome.halted and len(outcome.ran) == 2


@pytest.mark.parametrize("handler_timeout", [None, 5])
async def test_a_sync_function_returning_an_awaitable_halt_halts(
    handler_timeout: float | None,
) -> None:
    with anyio.fail_after(5):

        async def later() -> Halt:
            return Halt("from an awaitable")

        def handler(payload: Any) -> Awaitable[Halt]:
            return later()

        outcome = (
            await Hooks()
            .register("pre_tool_use", handler, timeout=handler_timeout)
            .run("pre_tool_use", {})
        )
        assert outcome.halted and outcome.reason == "from an awaitable"


# --- odd results: refused, so the run fails closed ------------------------------------------


@pytest.mark.parametrize("value", [True, False])
async def test_returning_a_bool_fails_closed(value: bool) -> None:
    with anyio.fail_after(5):
        after: list[str] = []
        hooks = (
            Hooks()
            .register("pre_tool_use", lambda p: value, name="boolish")
            .register("pre_tool_use", recorder(after, "after"))
        )
        outcome = await hooks.run("pre_tool_use", {"x": 1})
        assert outcome.halted and outcome.halted_by == "boolish"
        assert isinstance(outcome.error, TypeError)
        assert "return None to continue" in (outcome.reason or "")
        assert outcome.payload == {"x": 1}
        assert after == []


@pytest.mark.parametrize("handler_timeout", [None, 5])
async def test_returning_the_halt_class_fails_closed(handler_timeout: float | None) -> None:
    with anyio.fail_after(5):
        hooks = Hooks().register(
            "pre_tool_use", lambda p: Halt, name="oops", timeout=handler_timeout
        )
        outcome = await hooks.run("pre_tool_use", {})
        assert outcome.halted and outcome.halted_by == "oops"
        assert isinstance(outcome.error, TypeError)
        assert "Halt('reason')" in (outcome.reason or "")


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("handler_timeout", [None, 5])
async def test_an_awaitable_resolving_to_an_awaitable_fails_closed(
    handler_timeout: float | None,
) -> None:
    with anyio.fail_after(5):

        async def inner() -> None:
            return None

        async def forgot_to_await(payload: Any) -> Any:
            return inner()

        hooks = Hooks().register(
            "pre_tool_use", forgot_to_await, name="nested", timeout=handler_timeout
        )
        outcome = await hooks.run("pre_tool_use", {})
        assert outcome.halted and outcome.halted_by == "nested"
        assert isinstance(outcome.error, TypeError)
        assert "another awaitable" in (outcome.reason or "")
        gc.collect()  # the inner coroutine was closed: no "never awaited" warning


# --- matching ------------------------------------------------------------------------------


@dataclass
class ToolCall:
    tool_name: str
    tool_input: dict[str, Any]


def matching_hooks(calls: list[str]) -> Hooks:
    hooks = Hooks()
    for label, match in [
        ("edit", "Edit"),
        ("notebook", "NotebookEdit"),
        ("bash_or_edit", "Bash|Edit"),
        ("lower_bash", "bash"),
        ("star", "*"),
        ("none", None),
    ]:
        hooks = hooks.register("pre_tool_use", recorder(calls, label), name=label, match=match)
    return hooks


@pytest.mark.parametrize(
    "make_payload",
    [
        lambda name: {"tool_name": name, "tool_input": {}},
        lambda name: types.MappingProxyType({"tool_name": name}),
        lambda name: ToolCall(name, {}),
        lambda name: types.SimpleNamespace(tool_name=name),
    ],
    ids=["dict", "mapping", "dataclass", "namespace"],
)
@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("Edit", ("edit", "bash_or_edit", "star", "none")),
        ("NotebookEdit", ("notebook", "star", "none")),
        ("Bash", ("bash_or_edit", "star", "none")),
        ("bash", ("lower_bash", "star", "none")),
        ("BASH", ("star", "none")),
        ("Edit|Bash", ("star", "none")),
        ("", ("star", "none")),
    ],
)
async def test_match_is_exact_and_case_sensitive_for_dict_and_attribute_payloads(
    make_payload: Any, tool: str, expected: tuple[str, ...]
) -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        outcome = await matching_hooks(calls).run("pre_tool_use", make_payload(tool))
        assert outcome.ran == expected  # skipped handlers are absent from ran
        assert tuple(calls) == expected


@pytest.mark.parametrize(
    "payload",
    [{}, {"tool": "Bash"}, {"tool_name": None}, {"tool_name": ["Bash"]}, object(), "Bash", None],
)
async def test_a_payload_without_a_string_tool_name_never_matches_a_specific_matcher(
    payload: Any,
) -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        outcome = await matching_hooks(calls).run("pre_tool_use", payload)
        assert outcome.ran == ("star", "none")
        assert not outcome.halted


async def test_a_mapping_key_wins_over_an_attribute() -> None:
    with anyio.fail_after(5):

        class Odd(dict[str, Any]):
            tool_name = "Edit"

        calls: list[str] = []
        outcome = await matching_hooks(calls).run("pre_tool_use", Odd(tool_name="Bash"))
        assert outcome.ran == ("bash_or_edit", "star", "none")


async def test_matching_uses_the_payload_as_rewritten_so_far() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        def to_edit(payload: dict[str, Any]) -> dict[str, Any]:
            return {**payload, "tool_name": "Edit"}

        hooks = (
            Hooks()
            .register("pre_tool_use", recorder(calls, "bash_before"), name="b1", match="Bash")
            .register("pre_tool_use", to_edit, name="to_edit")
            .register("pre_tool_use", recorder(calls, "bash_after"), name="b2", match="Bash")
            .register("pre_tool_use", recorder(calls, "edit_after"), name="e", match="Edit")
        )
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.ran == ("b1", "to_edit", "e")
        assert calls == ["bash_before", "edit_after"]


async def test_a_tool_name_that_cannot_be_read_fails_closed() -> None:
    with anyio.fail_after(5):

        class Broken:
            @property
            def tool_name(self) -> str:
                raise RuntimeError("lazy field exploded")

        calls: list[str] = []
        hooks = (
            Hooks()
            .register("pre_tool_use", recorder(calls, "all"), name="all")
            .register("pre_tool_use", recorder(calls, "bash"), name="bash_guard", match="Bash")
            .register("pre_tool_use", recorder(calls, "later"), name="later")
        )
        outcome = await hooks.run("pre_tool_use", Broken())
        assert outcome.halted and outcome.halted_by == "bash_guard"
        assert isinstance(outcome.error, RuntimeError)
        assert "lazy field exploded" in (outcome.reason or "")
        # `ran` includes the halting handler, as for any halt, though its body never ran
        assert outcome.ran == ("all", "bash_guard")
        assert calls == ["all"]


async def test_one_value_serves_concurrent_runs() -> None:
    with anyio.fail_after(5):

        async def stamp(payload: dict[str, Any]) -> dict[str, Any]:
            await anyio.sleep(0.001)
            return {**payload, "seen": [*payload.get("seen", []), payload["id"]]}

        hooks = Hooks().register("pre_tool_use", stamp).register("pre_tool_use", stamp)
        results: dict[int, HookOutcome] = {}

        async def one(i: int) -> None:
            results[i] = await hooks.run("pre_tool_use", {"id": i})

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(one, i)
        assert all(results[i].payload == {"id": i, "seen": [i, i]} for i in range(20))


def gen_handler(payload: Any) -> Iterator[int]:
    yield 1


async def agen_handler(payload: Any) -> AsyncIterator[int]:
    yield 1


@pytest.mark.parametrize(
    ("handler", "kind"), [(gen_handler, "a generator"), (agen_handler, "an async generator")]
)
async def test_a_generator_handler_fails_closed(handler: Any, kind: str) -> None:
    with anyio.fail_after(5):
        later: list[str] = []
        hooks = (
            Hooks()
            .register("pre_tool_use", handler, name="gen")
            .register("pre_tool_use", lambda p: later.append("guard"), name="guard")
        )
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.halted and outcome.halted_by == "gen"
        assert outcome.reason is not None and f"returned {kind}" in outcome.reason
        assert isinstance(outcome.error, HookResultError)
        assert later == []


async def test_returning_true_is_reported_as_returned_not_raised() -> None:
    with anyio.fail_after(5):
        outcome = (
            await Hooks()
            .register("pre_tool_use", lambda p: True, name="yes")
            .run("pre_tool_use", {})
        )
        assert outcome.halted
        assert outcome.reason is not None
        assert outcome.reason.startswith("handler 'yes' returned True")
        assert "raised" not in outcome.reason


async def test_a_compiled_pattern_is_searched_in_the_tool_name() -> None:
    with anyio.fail_after(5):
        hooks = Hooks().register("pre_tool_use", lambda p: Halt("mcp"), match=re.compile("mcp__.*"))
        assert (await hooks.run("pre_tool_use", {"tool_name": "mcp__memory__read"})).halted
        assert not (await hooks.run("pre_tool_use", {"tool_name": "Bash"})).halted
        assert hooks.registrations("pre_tool_use")[0].match == re.compile("mcp__.*")


async def test_a_rewrite_changes_what_later_matchers_see() -> None:
    with anyio.fail_after(5):
        hooks = (
            Hooks()
            .register("pre_tool_use", lambda p: {**p, "tool_name": "Edit"}, name="rename")
            .register("pre_tool_use", lambda p: Halt("edit"), name="edit", match="Edit")
        )
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.halted_by == "edit" and outcome.ran == ("rename", "edit")


def test_the_fast_outcome_builder_builds_what_the_constructor_builds() -> None:
    """Every run builds its outcome without the frozen dataclass's __init__ (it is measured to
    matter); each field, and the class, must be exactly what the constructor gives."""
    fields = [f.name for f in dataclasses.fields(HookOutcome)]
    values: list[Any] = [object() for _ in fields]
    built, constructed = outcome(*values), HookOutcome(*values)
    assert type(built) is HookOutcome and built == constructed
    for name, value in zip(fields, values, strict=True):
        assert getattr(built, name) is value is getattr(constructed, name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.halted = True  # type: ignore[misc]
