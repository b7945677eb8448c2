"""Command hooks run real sh and Python scripts: every exit code, JSON field and failure."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.hooks import CommandHookError, HookOutcome, HookTimeoutError, load_hook_settings
from harness.hooks.command import OUTPUT_LIMIT

PY = shlex.quote(sys.executable)
BASH = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s1"}


def settings(tmp_path: Path, *commands: str, event: str = "PreToolUse", **extra: Any) -> Any:
    hooks = [{"type": "command", "command": c, **extra} for c in commands]
    return load_hook_settings({event: [{"matcher": "Bash", "hooks": hooks}]}, cwd=tmp_path)


async def run(tmp_path: Path, *commands: str, payload: Any = None, **extra: Any) -> HookOutcome:
    with anyio.fail_after(20):
        loaded = settings(tmp_path, *commands, **extra)
        return await loaded.hooks.run("pre_tool_use", BASH if payload is None else payload)


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body)
    return f"{PY} {shlex.quote(str(path))}"


async def group_gone(pgid: int) -> list[int]:
    """The live members of ``pgid`` once SIGKILL has had time to land (bounded poll)."""
    with anyio.fail_after(5):
        for _ in range(500):
            if not live_members(pgid):
                break
            await anyio.sleep(0.01)  # a killed process dies asynchronously
    return live_members(pgid)


def live_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (init here does not reap orphans)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            found.append(int(entry))
    return found


async def test_exit_0_without_json_continues(tmp_path: Path) -> None:
    outcome = await run(tmp_path, "echo plain text; exit 0")
    assert not outcome.halted and outcome.ran == ("echo plain text; exit 0",)


async def test_exit_2_halts_with_stderr(tmp_path: Path) -> None:
    outcome = await run(tmp_path, "echo 'no rm here' >&2; exit 2")
    assert outcome.halted and outcome.reason == "no rm here"
    assert outcome.halted_by == "echo 'no rm here' >&2; exit 2"


async def test_exit_2_with_empty_stderr_still_halts_with_a_reason(tmp_path: Path) -> None:
    outcome = await run(tmp_path, "exit 2")
    assert outcome.halted and outcome.reason and "exit 2" in outcome.reason


@pytest.mark.parametrize("code", [1, 3, 126])
async def test_other_exit_codes_fail_closed(tmp_path: Path, code: int) -> None:
    outcome = await run(tmp_path, f"echo oops >&2; exit {code}")
    assert outcome.halted and isinstance(outcome.error, CommandHookError)
    assert (
        outcome.reason
        == f"command hook 'echo oops >&2; exit {code}' exited with status {code}: oops"
    )


async def test_a_missing_command_fails_closed(tmp_path: Path) -> None:
    outcome = await run(tmp_path, "no-such-hook-command-xyz")
    assert outcome.halted and outcome.reason is not None
    assert (
        "'no-such-hook-command-xyz'" in outcome.reason
        and "127 (command not found)" in outcome.reason
    )


async def test_a_missing_cwd_fails_closed(tmp_path: Path) -> None:
    outcome = await run(tmp_path / "gone", "true")
    assert outcome.halted and outcome.reason is not None and "could not start" in outcome.reason


async def test_a_python_hook_reads_the_stdin_fields(tmp_path: Path) -> None:
    dump = tmp_path / "in.json"
    body = (
        "import json, os, sys\n"
        "data = json.load(sys.stdin)\n"
        "data['env'] = os.environ['CLAUDE_PROJECT_DIR']\n"
        "data['pwd'] = os.getcwd()\n"
        f"open({str(dump)!r}, 'w').write(json.dumps(data))\n"
    )
    outcome = await run(tmp_path, script(tmp_path, "dump.py", body))
    assert not outcome.halted, outcome.reason
    data = json.loads(dump.read_text())
    assert data == {
        "hook_event_name": "PreToolUse",
        "session_id": "s1",
        "cwd": str(tmp_path),
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "env": str(tmp_path),
        "pwd": str(tmp_path),
    }


async def test_post_tool_use_gets_the_tool_response(tmp_path: Path) -> None:
    dump = tmp_path / "in.json"
    loaded = settings(tmp_path, f"cat > {shlex.quote(str(dump))}", event="PostToolUse")
    with anyio.fail_after(20):
        outcome = await loaded.hooks.run("post_tool_use", {**BASH, "tool_response": {"ok": 1}})
    assert not outcome.halted
    data = json.loads(dump.read_text())
    assert data["hook_event_name"] == "PostToolUse" and data["tool_response"] == {"ok": 1}


async def test_shell_metacharacters_in_the_payload_are_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = f"$(touch {marker}) `touch {marker}`; touch {marker} | touch {marker}"
    payload = {"tool_name": "Bash", "tool_input": {"command": evil}}
    outcome = await run(
        tmp_path, "cat >/dev/null", 'read line; echo "$line" >/dev/null', payload=payload
    )
    assert not outcome.halted, outcome.reason
    assert not marker.exists()


def json_hook(tmp_path: Path, output: object, name: str = "out.json") -> str:
    (tmp_path / name).write_text(json.dumps(output))
    return f"cat {shlex.quote(str(tmp_path / name))}"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ({"decision": "block", "reason": "blocked by policy"}, "blocked by policy"),
        ({"continue": False, "stopReason": "stop now"}, "stop now"),
        (
            {
                "hookSpecificOutput": {
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no",
                }
            },
            "no",
        ),
        (
            {
                "hookSpecificOutput": {
                    "permissionDecision": "ask",
                    "permissionDecisionReason": "ask me",
                }
            },
            "ask me",
        ),
    ],
)
async def test_json_decisions_halt_with_their_reason(
    tmp_path: Path, output: object, reason: str
) -> None:
    outcome = await run(tmp_path, json_hook(tmp_path, output))
    assert outcome.halted and outcome.reason == reason and outcome.error is None


@pytest.mark.parametrize(
    "output",
    [
        {},
        {"decision": "approve"},
        {"hookSpecificOutput": {"permissionDecision": "allow"}},
        {"continue": True},
    ],
)
async def test_json_that_allows_continues(tmp_path: Path, output: object) -> None:
    outcome = await run(tmp_path, json_hook(tmp_path, output))
    assert not outcome.halted, outcome.reason


async def test_continue_false_without_stop_reason_still_has_a_reason(tmp_path: Path) -> None:
    outcome = await run(tmp_path, json_hook(tmp_path, {"continue": False}))
    assert outcome.halted and outcome.reason


async def test_updated_input_is_seen_by_the_next_hook_in_file_order(tmp_path: Path) -> None:
    dump = tmp_path / "seen.json"
    rewrite = json_hook(tmp_path, {"hookSpecificOutput": {"updatedInput": {"command": "ls -l"}}})
    outcome = await run(tmp_path, rewrite, f"cat > {shlex.quote(str(dump))}")
    assert not outcome.halted
    assert outcome.payload["tool_input"] == {"command": "ls -l"}
    assert json.loads(dump.read_text())["tool_input"] == {"command": "ls -l"}
    assert outcome.ran == (rewrite, f"cat > {shlex.quote(str(dump))}")


@pytest.mark.parametrize(
    "output",
    [
        '{"decision": "block"',
        '{"continue": "no"}',
        '{"decision": "maybe"}',
        '{"hookSpecificOutput": {"permissionDecision": "defer"}}',
        '{"hookSpecificOutput": {"updatedInput": "ls"}}',
        '{"hookSpecificOutput": []}',
    ],
)
async def test_invalid_json_output_fails_closed(tmp_path: Path, output: str) -> None:
    (tmp_path / "bad").write_text(output)
    outcome = await run(tmp_path, "cat bad")
    assert outcome.halted and isinstance(outcome.error, CommandHookError)
    assert outcome.reason is not None and outcome.reason.startswith("command hook 'cat bad' ")


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
async def test_output_over_the_cap_fails_closed(tmp_path: Path, stream: str) -> None:
    target = "sys.stdout" if stream == "stdout" else "sys.stderr"
    body = (
        f"import sys, time\n{target}.buffer.write(b'x' * ({OUTPUT_LIMIT} + 1))\n"
        f"{target}.flush()\ntime.sleep(60)\n"
    )
    outcome = await run(tmp_path, script(tmp_path, "loud.py", body))
    assert outcome.halted and outcome.reason is not None
    assert f"more than {OUTPUT_LIMIT} bytes to {stream}" in outcome.reason


async def test_output_at_the_cap_is_fine_and_both_pipes_are_read_concurrently(
    tmp_path: Path,
) -> None:
    # Each stream far over a pipe buffer: reading one after the other would deadlock.
    body = (
        "import sys\n"
        "for _ in range(16):\n"
        "    sys.stderr.buffer.write(b'e' * 65536); sys.stderr.flush()\n"
        "    sys.stdout.buffer.write(b'o' * 65536); sys.stdout.flush()\n"
    )
    outcome = await run(tmp_path, script(tmp_path, "both.py", body))
    assert not outcome.halted, outcome.reason


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    command = f"echo $$ > {shlex.quote(str(pidfile))}; sleep 300 & sleep 300"
    outcome = await run(tmp_path, command, timeout=0.5)
    assert outcome.halted and isinstance(outcome.error, HookTimeoutError)
    assert outcome.reason == f"handler {command!r} ran past its timeout of 0.5s"
    pgid = int(pidfile.read_text())
    assert await group_gone(pgid) == []


async def test_outside_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    loaded = settings(tmp_path, f"echo $$ > {shlex.quote(str(fifo))}; sleep 300 & sleep 300")
    with anyio.fail_after(20):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(loaded.hooks.run, "pre_tool_use", BASH)
                # Opening the FIFO waits for the hook to write its pid: it is running now.
                pgid = int(await anyio.to_thread.run_sync(fifo.read_text))
                scope.cancel()
        assert scope.cancelled_caught
    assert await group_gone(pgid) == []


async def test_background_leftovers_of_a_finished_hook_are_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    outcome = await run(tmp_path, f"echo $$ > {shlex.quote(str(pidfile))}; sleep 300 & exit 0")
    assert not outcome.halted, outcome.reason
    assert await group_gone(int(pidfile.read_text())) == []


async def test_a_hook_that_ignores_a_large_stdin_is_fine(tmp_path: Path) -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "x" * 500_000}}
    outcome = await run(tmp_path, "exit 0", payload=payload)
    assert not outcome.halted, outcome.reason


async def test_a_payload_that_is_not_json_fails_closed(tmp_path: Path) -> None:
    outcome = await run(tmp_path, "true", payload={"tool_name": "Bash", "tool_input": {1, 2}})
    assert outcome.halted and outcome.reason is not None and "not JSON" in outcome.reason


async def test_after_a_timeout_the_group_is_gone(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    outcome = await run(
        tmp_path, f"echo $$ > {shlex.quote(str(pidfile))}; exec sleep 300", timeout=0.3
    )
    assert outcome.halted and isinstance(outcome.error, HookTimeoutError)
    with pytest.raises(ProcessLookupError):
        os.killpg(int(pidfile.read_text()), 0)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] not in "ZX"


async def gone(pid: int) -> bool:
    """Whether ``pid`` is dead once SIGKILL has had time to land (bounded poll)."""
    with anyio.fail_after(5):
        for _ in range(500):
            if not alive(pid):
                break
            await anyio.sleep(0.01)
    return not alive(pid)


LEAVER = """
import os, sys, time
pidfile, how, output = sys.argv[1:]
child = os.fork()
if child == 0:  # keeps the hook's stdout and stderr open
    os.setsid() if how == "session" else os.setpgid(0, 0)
    with open(pidfile + ".tmp", "w") as file:
        file.write(str(os.getpid()))
    os.rename(pidfile + ".tmp", pidfile)
    time.sleep(300)
    os._exit(0)
while not os.path.exists(pidfile):  # the hook exits once its leftover is on its own
    time.sleep(0.005)
sys.stdout.write(output)
"""


def leaver(tmp_path: Path, how: str, output: str = "") -> tuple[str, Path]:
    pidfile = tmp_path / "leftover"
    command = script(tmp_path, "leaver.py", LEAVER)
    return f"{command} {shlex.quote(str(pidfile))} {how} {shlex.quote(output)}", pidfile


@pytest.mark.parametrize(
    ("output", "halted"), [("", False), ('{"decision": "block", "reason": "real"}', True)]
)
async def test_a_daemon_holding_stdout_neither_stalls_the_chain_nor_survives(
    tmp_path: Path, output: str, halted: bool
) -> None:
    """The hook exits at once but leaves a setsid() daemon with its stdout and stderr: the run
    reports the hook's own result well within its timeout, and the daemon is killed."""
    command, pidfile = leaver(tmp_path, "session", output)
    with anyio.fail_after(8):  # the hook's timeout is 5: a regression halts, or fails here
        outcome = await run(tmp_path, command, timeout=5)
    assert outcome.halted is halted and not isinstance(outcome.error, HookTimeoutError)
    if halted:
        assert outcome.reason == "real"
    assert await gone(int(pidfile.read_text()))


async def test_a_process_moved_to_another_group_is_killed(tmp_path: Path) -> None:
    command, pidfile = leaver(tmp_path, "group")
    with anyio.fail_after(8):
        outcome = await run(tmp_path, command, timeout=5)
    assert not outcome.halted, outcome.reason
    assert await gone(int(pidfile.read_text()))


async def test_a_byte_order_mark_before_a_block_still_blocks(tmp_path: Path) -> None:
    command = r"""printf '\357\273\277{"decision":"block","reason":"bom"}'"""
    outcome = await run(tmp_path, command)
    assert outcome.halted and outcome.reason == "bom"


async def test_deeply_nested_json_output_fails_closed_with_a_hook_error(tmp_path: Path) -> None:
    out = tmp_path / "deep.json"
    out.write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")
    outcome = await run(tmp_path, f"cat {shlex.quote(str(out))}")
    assert outcome.halted and isinstance(outcome.error, CommandHookError)
    assert outcome.reason is not None and "nested too deeply" in outcome.reason


def env_hook(tmp_path: Path) -> str:
    body = "import json, os, sys\njson.dump(dict(os.environ), open(sys.argv[1], 'w'))\n"
    return script(tmp_path, "env.py", body) + " " + shlex.quote(str(tmp_path / "env.json"))


async def test_an_env_allowlist_keeps_secrets_from_the_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_TEST_SECRET", "s3cret")
    monkeypatch.setenv("HARNESS_TEST_ALLOWED", "fine")
    group = {"hooks": [{"type": "command", "command": env_hook(tmp_path)}]}
    loaded = load_hook_settings(
        {"PreToolUse": [group]}, cwd=tmp_path, env_allowlist=["PATH", "HARNESS_TEST_ALLOWED"]
    )
    with anyio.fail_after(20):
        outcome = await loaded.hooks.run("pre_tool_use", BASH)
    assert not outcome.halted, outcome.reason
    seen = json.loads((tmp_path / "env.json").read_text())
    assert "HARNESS_TEST_SECRET" not in seen
    assert seen["HARNESS_TEST_ALLOWED"] == "fine" and seen["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    shell_and_python = {"PWD", "SHLVL", "_", "LC_CTYPE"}  # set by sh and Python themselves
    assert set(seen) - shell_and_python == {"PATH", "HARNESS_TEST_ALLOWED", "CLAUDE_PROJECT_DIR"}


async def test_by_default_a_hook_inherits_the_whole_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_TEST_SECRET", "s3cret")
    outcome = await run(tmp_path, env_hook(tmp_path))
    assert not outcome.halted, outcome.reason
    seen = json.loads((tmp_path / "env.json").read_text())
    assert seen["HARNESS_TEST_SECRET"] == "s3cret" and seen["CLAUDE_PROJECT_DIR"] == str(tmp_path)


async def test_the_config_allowlist_reaches_a_real_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness import load_config

    monkeypatch.setenv("HARNESS_TEST_SECRET", "s3cret")
    monkeypatch.setenv("HARNESS_TEST_ALLOWED", "fine")
    toml = tmp_path / "harness.toml"
    toml.write_text('[hooks]\nenv_allowlist = ["PATH", "HARNESS_TEST_ALLOWED"]\n')
    config = load_config(toml)
    assert config.hooks.env_allowlist == ("PATH", "HARNESS_TEST_ALLOWED")
    settings_file = tmp_path / "settings.json"
    group = {"hooks": [{"type": "command", "command": env_hook(tmp_path)}]}
    settings_file.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    loaded = load_hook_settings(
        settings_file, cwd=tmp_path, env_allowlist=config.hooks.env_allowlist
    )
    with anyio.fail_after(20):
        outcome = await loaded.hooks.run("pre_tool_use", BASH)
    assert not outcome.halted, outcome.reason
    seen = json.loads((tmp_path / "env.json").read_text())
    assert "HARNESS_TEST_SECRET" not in seen and seen["HARNESS_TEST_ALLOWED"] == "fine"
    assert load_config().hooks.env_allowlist is None  # the shipped default: inherit everything
