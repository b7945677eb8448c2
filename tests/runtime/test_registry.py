"""Registry: unique and duplicate keys, names in child specs, never a dead actor."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.runtime import (
    Actor,
    AlreadyRegistered,
    DynamicSupervisor,
    FailedToStartChild,
    NoProc,
    Registry,
    Supervisor,
    monitor,
)
from tests.runtime.support import until


class Session(Actor):
    async def init(self) -> None:
        self.started_with = True

    async def handle_call(self, msg: Any) -> Any:
        if msg == "crash":
            raise RuntimeError("crash")
        return msg

    async def terminate(self, reason: Any) -> None:
        await (
            anyio.lowlevel.checkpoint()
        )  # cleanup that yields: the window a stale lookup would hit


class SlowTerminate(Actor):
    def __init__(self, release: anyio.Event) -> None:
        super().__init__()
        self.release = release
        self.in_terminate = anyio.Event()

    async def terminate(self, reason: Any) -> None:
        self.in_terminate.set()
        await self.release.wait()


async def test_a_named_child_is_found_while_it_runs_and_not_after() -> None:
    registry = Registry()
    session = Session()
    with anyio.fail_after(5):
        async with Supervisor([session.child_spec(id="s", name=(registry, "s"))]):
            assert registry.lookup("s") is session
            assert registry.lookup_all("s") == (session,)
            assert registry.keys_of(session) == ["s"]
        assert registry.lookup("s") is None
        assert len(registry) == 0


async def test_an_actor_in_terminate_is_no_longer_found() -> None:
    registry = Registry()
    release = anyio.Event()
    actor = SlowTerminate(release)
    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            ref = await sup.start_child(actor.child_spec(id="a", name=(registry, "a")))
            async with anyio.create_task_group() as group:
                group.start_soon(sup.terminate_child, ref)
                await actor.in_terminate.wait()
                assert registry.lookup("a") is None  # stopping: never returned
                with pytest.raises(AlreadyRegistered):  # still held until it is gone
                    registry.register("a", Session())
                release.set()


async def test_a_restarted_child_is_found_again_once_it_runs() -> None:
    registry = Registry()
    session = Session()
    with anyio.fail_after(5):
        async with Supervisor([session.child_spec(id="s", name=(registry, "s"))]):
            watch = monitor(session)
            with pytest.raises(Exception, match="exited"):
                await session.call("crash")
            await watch.down()
            await until(lambda: registry.lookup("s") is not None)
            assert registry.lookup("s") is session and session.running


async def test_a_taken_unique_name_fails_the_start_and_nothing_keeps_running() -> None:
    registry = Registry()
    first, second = Session(), Session()
    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            await sup.start_child(first.child_spec(id="a", name=(registry, "key")))
            with pytest.raises(FailedToStartChild) as info:
                await sup.start_child(second.child_spec(id="b", name=(registry, "key")))
            assert isinstance(info.value.cause, AlreadyRegistered)
            assert not second.running
            assert not hasattr(second, "started_with")  # init never ran
            assert registry.lookup("key") is first
            assert [c.id for c in sup.which_children()] == ["a"]


async def test_register_by_hand_and_unregister() -> None:
    registry = Registry()
    a, b = Session(), Session()
    with pytest.raises(NoProc):
        registry.register("x", a)  # not running
    with anyio.fail_after(5):
        async with Supervisor([a.child_spec(id="a"), b.child_spec(id="b")]):
            registry.register("x", a)
            registry.register("x", a)  # the same actor again: a no-op
            with pytest.raises(AlreadyRegistered) as info:
                registry.register("x", b)
            assert isinstance(info.value, ValueError)
            registry.unregister("x")
            assert registry.lookup("x") is None
            registry.register("x", b)
            assert registry.lookup("x") is b
        assert registry.lookup("x") is None  # registrations end with the incarnation


async def test_duplicate_keys_hold_many_actors_in_registration_order() -> None:
    registry = Registry(keys="duplicate")
    actors = [Session() for _ in range(3)]
    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            refs = [
                await sup.start_child(a.child_spec(id=f"a{n}", name=(registry, "topic")))
                for n, a in enumerate(actors)
            ]
            assert registry.lookup_all("topic") == tuple(actors)
            assert registry.lookup("topic") is actors[0]
            await sup.terminate_child(refs[0])
            assert registry.lookup_all("topic") == tuple(actors[1:])
            registry.unregister("topic", actors[1])
            assert registry.lookup_all("topic") == (actors[2],)


async def test_lookups_in_a_tight_loop_while_sessions_crash_return_only_live_actors() -> None:
    registry = Registry()
    sessions = [Session() for _ in range(20)]
    seen_dead = 0
    found = 0
    with anyio.fail_after(20):
        async with DynamicSupervisor(max_restarts=1000, max_seconds=1) as sup:
            for n, session in enumerate(sessions):
                await sup.start_child(session.child_spec(id=f"s{n}", name=(registry, n)))

            done = anyio.Event()

            async def crash_some() -> None:
                for round in range(200):
                    victim = sessions[round % len(sessions)]
                    if victim.running:
                        with pytest.raises(Exception, match="exited"):
                            await victim.call("crash")
                    await anyio.lowlevel.checkpoint()
                done.set()

            async with anyio.create_task_group() as group:
                group.start_soon(crash_some)
                while not done.is_set():
                    for n in range(len(sessions)):
                        actor = registry.lookup(n)
                        if actor is not None:
                            found += 1
                            seen_dead += not actor.running
                    await anyio.lowlevel.checkpoint()
    assert seen_dead == 0 and found > 0


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(st.sampled_from(["start", "crash", "stop"]), st.integers(0, 4))))
def test_the_registry_never_returns_a_dead_actor(ops: list[tuple[str, int]]) -> None:
    """Random start/crash/stop sequences: lookup is the running actor, or None."""

    async def scenario() -> None:
        registry = Registry()
        actors = [Session() for _ in range(5)]
        refs: dict[int, Any] = {}
        with anyio.fail_after(10):
            async with DynamicSupervisor(max_restarts=10_000, max_seconds=1) as sup:
                for op, n in ops:
                    actor = actors[n]
                    if op == "start" and n not in refs:
                        spec = actor.child_spec(id=f"a{n}", name=(registry, n))
                        refs[n] = await sup.start_child(spec)
                    elif op == "crash" and actor.running:
                        with pytest.raises(Exception, match="exited"):
                            await actor.call("crash")
                    elif op == "stop" and n in refs:
                        await sup.terminate_child(refs.pop(n))
                    for key, candidate in enumerate(actors):
                        found = registry.lookup(key)
                        assert found is None or (found is candidate and found.running)
                        if key not in refs:
                            assert found is None
        assert all(registry.lookup(key) is None for key in range(5))

    anyio.run(scenario)
