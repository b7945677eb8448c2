"""Registration: the value is immutable, validated at register time, and named sensibly."""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import pickle
from typing import Any

import anyio
import pytest

import harness
from harness.errors import HarnessError
from harness.hooks import (
    PHASES,
    Halt,
    HookOutcome,
    HookRegistration,
    Hooks,
    HookTimeoutError,
    HookValueError,
    load_hook_settings,
)


def allow(payload: Any) -> None:
    return None


def deny(payload: Any) -> Halt:
    return Halt("no")


class Guard:
    def __call__(self, payload: Any) -> None:
        return None

    def method(self, payload: Any) -> None:
        return None


def test_phases_are_the_contract_phases() -> None:
    assert PHASES == ("pre_tool_use", "post_tool_use", "session_start", "session_end")


def test_public_names_are_reexported_from_the_top_level_package() -> None:
    assert harness.PHASES is PHASES
    assert harness.Halt is Halt
    assert harness.Hooks is Hooks
    assert harness.HookOutcome is HookOutcome
    assert harness.HookRegistration is HookRegistration
    assert harness.HookTimeoutError is HookTimeoutError


def test_register_returns_a_new_value_and_leaves_the_old_one_unchanged() -> None:
    empty = Hooks()
    one = empty.register("pre_tool_use", allow)
    two = one.register("pre_tool_use", deny, match="Bash")
    assert empty.registrations("pre_tool_use") == ()
    assert [r.name for r in one.registrations("pre_tool_use")] == ["allow"]
    assert [r.name for r in two.registrations("pre_tool_use")] == ["allow", "deny"]
    assert empty is not one is not two
    for phase in PHASES[1:]:
        assert two.registrations(phase) == ()


def test_handlers_are_listed_in_registration_order_with_their_settings() -> None:
    hooks = (
        Hooks()
        .register("pre_tool_use", deny, name="first", match="Bash|Edit", timeout=2)
        .register("pre_tool_use", allow)
        .register("post_tool_use", allow, match="*")
    )
    first, second = hooks.registrations("pre_tool_use")
    assert first == HookRegistration("pre_tool_use", "first", deny, "Bash|Edit", 2.0)
    assert second == HookRegistration("pre_tool_use", "allow", allow, None, None)
    (post,) = hooks.registrations("post_tool_use")
    assert post.match is None  # "*" and None mean the same: every payload


def test_the_value_cannot_be_mutated() -> None:
    hooks = Hooks()
    with pytest.raises(AttributeError, match="immutable"):
        hooks._chains = {}
    with pytest.raises(AttributeError, match="immutable"):
        del hooks._chains
    record = hooks.register("pre_tool_use", allow).registrations("pre_tool_use")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = "other"  # type: ignore[misc]


def test_copies_and_pickles_are_the_same_value() -> None:
    hooks = (
        Hooks()
        .register("pre_tool_use", allow, match="Bash|Edit", timeout=3)
        .register("pre_tool_use", deny, name="deny")
        .register("session_start", allow)
    )
    assert copy.copy(hooks) is hooks
    assert copy.deepcopy(hooks) is hooks
    restored = pickle.loads(pickle.dumps(hooks))
    assert restored == hooks
    assert restored.registrations("pre_tool_use") == hooks.registrations("pre_tool_use")


def test_equal_registrations_give_equal_values() -> None:
    a = Hooks().register("pre_tool_use", allow).register("session_end", deny, match="X")
    b = Hooks().register("pre_tool_use", allow).register("session_end", deny, match="X")
    c = Hooks().register("pre_tool_use", deny)
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert Hooks() == Hooks()
    assert "pre_tool_use=1" in repr(a)


@pytest.mark.parametrize("phase", ["PreToolUse", "pre-tool-use", "Pre_tool_use", "", "stop"])
def test_unknown_phase_is_refused_at_register_and_the_message_lists_the_phases(
    phase: str,
) -> None:
    with pytest.raises(ValueError, match="unknown hook phase") as info:
        Hooks().register(phase, allow)
    for known in PHASES:
        assert known in str(info.value)


def test_unknown_phase_is_refused_by_handlers() -> None:
    with pytest.raises(ValueError, match="pre_tool_use, post_tool_use, session_start, session_end"):
        Hooks().registrations("pre_tool")


async def test_unknown_phase_is_refused_at_run() -> None:
    with anyio.fail_after(5):
        hooks = Hooks().register("pre_tool_use", allow)
        with pytest.raises(ValueError, match="unknown hook phase 'PreToolUse'") as info:
            await hooks.run("PreToolUse", {})
        assert info.value.__context__ is None or info.value.__suppress_context__
        for known in PHASES:
            assert known in str(info.value)
        with pytest.raises(ValueError, match="unknown hook phase"):
            await hooks.run(["pre_tool_use"], {})  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="unknown hook phase None"):
            await hooks.run(None, {})  # type: ignore[arg-type]


def test_non_callable_handler_is_refused() -> None:
    with pytest.raises(TypeError, match="callable"):
        Hooks().register("pre_tool_use", "rm -rf")  # type: ignore[arg-type]


def outer() -> Any:
    def inner(payload: Any) -> None:
        return None

    return inner


async def async_guard(payload: Any, *, tool: str) -> None:
    return None


class AsyncGuard:
    async def __call__(self, payload: Any) -> None:
        return None


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (allow, "allow"),
        (outer(), "outer.<locals>.inner"),
        (lambda payload: None, "<lambda>"),
        (Guard(), "Guard"),
        (AsyncGuard(), "AsyncGuard"),
        (Guard().method, "Guard.method"),
        (functools.partial(async_guard, tool="Bash"), "async_guard"),
        (functools.partial(functools.partial(async_guard), tool="Bash"), "async_guard"),
        (functools.partial(Guard()), "Guard"),
        (print, "print"),
    ],
)
def test_default_name_is_the_qualname(handler: Any, expected: str) -> None:
    (record,) = Hooks().register("pre_tool_use", handler).registrations("pre_tool_use")
    assert record.name.endswith(expected)
    if expected != "<lambda>":
        assert record.name == expected


def test_explicit_name_wins_and_must_be_a_non_empty_str() -> None:
    hooks = Hooks().register("pre_tool_use", allow, name="no-rm-rf")
    assert hooks.registrations("pre_tool_use")[0].name == "no-rm-rf"
    with pytest.raises(ValueError, match="name must not be empty"):
        Hooks().register("pre_tool_use", allow, name="")
    with pytest.raises(ValueError, match="name must not be empty"):
        Hooks().register("pre_tool_use", allow, name="  ")
    with pytest.raises(TypeError, match="name must be a str"):
        Hooks().register("pre_tool_use", allow, name=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("match", "message"),
    [
        ("", "empty tool name"),
        ("Bash|", "empty tool name"),
        ("|Bash", "empty tool name"),
        ("Bash||Edit", "empty tool name"),
        ("Bash | Edit", "whitespace"),
        (" Bash", "whitespace"),
        ("Edit*", "looks like a pattern"),
        ("mcp__.*", "looks like a pattern"),
        ("Bash|*", "looks like a pattern"),
        ("(Bash)", "looks like a pattern"),
        ("^Bash$", "looks like a pattern"),
    ],
)
def test_bad_match_strings_are_refused_at_register(match: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Hooks().register("pre_tool_use", allow, match=match)


def test_match_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="match must be a str"):
        Hooks().register("pre_tool_use", allow, match=["Bash"])  # type: ignore[arg-type]


def test_valid_match_strings_are_kept_as_given() -> None:
    for match in ("Bash", "Bash|Edit", "mcp__github__create-issue", "Edit|Edit"):
        hooks = Hooks().register("pre_tool_use", allow, match=match)
        assert hooks.registrations("pre_tool_use")[0].match == match


@pytest.mark.parametrize("timeout", [0, 0.0, -1, -0.5, math.nan])
def test_non_positive_timeouts_are_refused(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout must be > 0"):
        Hooks().register("pre_tool_use", allow, timeout=timeout)


@pytest.mark.parametrize("timeout", ["1", True, [1]])
def test_non_numeric_timeouts_are_refused(timeout: Any) -> None:
    with pytest.raises(TypeError, match="number of seconds"):
        Hooks().register("pre_tool_use", allow, timeout=timeout)


def test_timeouts_are_normalised() -> None:
    hooks = (
        Hooks()
        .register("pre_tool_use", allow, timeout=1)
        .register("pre_tool_use", allow, timeout=math.inf)
    )
    assert [r.timeout for r in hooks.registrations("pre_tool_use")] == [1.0, None]


def test_halt_needs_a_reason() -> None:
    assert Halt("rm -rf is not allowed").reason == "rm -rf is not allowed"
    with pytest.raises(ValueError, match="non-empty reason"):
        Halt("")
    with pytest.raises(ValueError, match="non-empty reason"):
        Halt(" \n")
    with pytest.raises(TypeError, match="must be a str"):
        Halt(None)  # type: ignore[arg-type]


def test_halt_and_outcome_are_frozen() -> None:
    halt = Halt("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        halt.reason = "y"  # type: ignore[misc]
    outcome = HookOutcome(False, None, None, {}, (), None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.halted = True  # type: ignore[misc]


def test_handlers_returns_the_callables_in_registration_order() -> None:
    def first(payload: object) -> None:
        return None

    def second(payload: object) -> None:
        return None

    hooks = Hooks().register("pre_tool_use", first).register("pre_tool_use", second)
    assert hooks.handlers("pre_tool_use") == (first, second)
    assert hooks.handlers("post_tool_use") == ()
    with pytest.raises(ValueError, match="pre_tool"):
        hooks.handlers("pre_tool")


def test_a_pattern_string_points_to_re_compile() -> None:
    with pytest.raises(HookValueError, match=r"re\.compile"):
        Hooks().register("pre_tool_use", print, match="mcp__.*")


def test_hook_errors_are_harness_errors() -> None:
    with pytest.raises(HarnessError):
        Hooks().register("nope", print)
    with pytest.raises(ValueError):
        Hooks().register("nope", print)
    with pytest.raises(HarnessError):
        Halt("")
    with pytest.raises(HarnessError):
        load_hook_settings({"PreToolUse": {}}, cwd=".")
    assert issubclass(HookTimeoutError, HarnessError) and issubclass(HookTimeoutError, TimeoutError)
    with pytest.raises(HarnessError):
        Hooks().register("pre_tool_use", 42)  # type: ignore[arg-type]
