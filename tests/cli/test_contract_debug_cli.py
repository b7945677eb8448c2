"""CONTRACT §7 debug and the command line: acceptance tests derived from the contract text."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import harness
from harness import LAYERS, AssembledPrompt, Strategy
from tests.databases import plain_db

ROOT = Path(__file__).resolve().parents[2]
AGENT_CONFIG = '[agents]\ncontract-agent = "You are the contract agent."\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def config_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    cfg = write(tmp_path / "cfg.toml", AGENT_CONFIG)
    monkeypatch.setenv("HARNESS_CONFIG", str(cfg))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "AGENTS.md", "Root rule for the contract.")
    write(ws / "pkg" / "AGENTS.md", "Pkg rule for the contract.")
    write(ws / "blank" / "AGENTS.md", "   \n")  # skipped with a warning
    write(ws / ".AGENTS" / "overview.md", "Overview text.")
    return ws


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return plain_db(tmp_path / "i.db", [("acme", "contract-agent", "DB rule here.")])


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", "debug", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


# --- debug.print / aprint ---------------------------------------------------------------------


def test_debug_print_sync_returns_prompt_and_prints_report(
    workspace: Path, database: Path, config_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    p = harness.debug.print(
        workspace,
        agent="contract-agent",
        project_id="acme",
        database=database,
        budgets={"instruction_files": 1000},
        file=out,
    )
    assert isinstance(p, AssembledPrompt)
    text = out.getvalue()
    for name in LAYERS:
        assert name in text
    for strategy in (Strategy.KEEP_OR_DROP, Strategy.DROP_WHOLE_UNITS, Strategy.TRUNCATE_TAIL):
        assert strategy.value in text
    assert "1000" in text or "1,000" in text  # tokens against budget
    assert "blank/AGENTS.md" in text  # every warning
    assert p.text in text  # then the assembled prompt
    assert text.rindex(p.text) > text.index("blank/AGENTS.md")
    assert "db:acme/contract-agent" in text  # units kept, by id
    assert capsys.readouterr().out == "", "file= receives the output"


def test_debug_print_shows_dropped_units(workspace: Path, config_env: dict[str, str]) -> None:
    out = io.StringIO()
    p = harness.debug.print(
        workspace, agent="contract-agent", budgets={"instruction_files": 0}, file=out
    )
    r = next(r for r in p.layers if r.name == "instruction_files")
    assert r.dropped == ("AGENTS.md", "pkg/AGENTS.md")
    assert "pkg/AGENTS.md" in out.getvalue()


def test_debug_print_tokenizer_marks_exact(
    workspace: Path, config_env: dict[str, str], cl100k: harness.TiktokenTokenizer
) -> None:
    p = harness.debug.print(workspace, agent="contract-agent", tokenizer=cl100k, file=io.StringIO())
    assert p.estimated is False


async def test_debug_aprint_inside_event_loop(
    workspace: Path, database: Path, config_env: dict[str, str]
) -> None:
    with anyio.fail_after(20):
        out = io.StringIO()
        p = await harness.debug.aprint(
            workspace, agent="contract-agent", project_id="acme", database=database, file=out
        )
        assert isinstance(p, AssembledPrompt)
        assert p.text in out.getvalue()
        assert "DB rule here." in p.text


def test_debug_print_and_aprint_agree(
    workspace: Path, database: Path, config_env: dict[str, str]
) -> None:
    kwargs = {"agent": "contract-agent", "project_id": "acme", "database": database}
    a = harness.debug.print(workspace, file=io.StringIO(), **kwargs)  # type: ignore[arg-type]

    async def main() -> AssembledPrompt:
        with anyio.fail_after(20):
            return await harness.debug.aprint(workspace, file=io.StringIO(), **kwargs)  # type: ignore[arg-type]

    b = anyio.run(main)
    assert a.digest == b.digest


# --- Command line -----------------------------------------------------------------------------


def test_cli_json_prints_manifest(
    workspace: Path, database: Path, config_env: dict[str, str]
) -> None:
    res = cli(
        config_env,
        str(workspace),
        "--agent",
        "contract-agent",
        "--project-id",
        "acme",
        "--db",
        str(database),
        "--budget",
        "identity=77",
        "--budget",
        "task_state=5",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    manifest = json.loads(res.stdout)
    expected = harness.debug.print(
        workspace,
        agent="contract-agent",
        project_id="acme",
        database=database,
        budgets={"identity": 77, "task_state": 5},
        file=io.StringIO(),
    )
    assert without_clock(manifest) == without_clock(expected.manifest())
    assert manifest["digest"] == expected.digest
    budgets = {r.name: r.budget for r in expected.layers}
    assert budgets["identity"] == 77 and budgets["task_state"] == 5
    assert "DB rule here." in expected.text


def test_cli_human_report_and_tokenizers(
    workspace: Path, config_env: dict[str, str], cl100k_file: Path
) -> None:
    res = cli(config_env, str(workspace), "--agent", "contract-agent")
    assert res.returncode == 0, res.stderr
    assert "Root rule for the contract." in res.stdout
    for name in LAYERS:
        assert name in res.stdout
    approx = cli(
        config_env,
        str(workspace),
        "--agent",
        "contract-agent",
        "--tokenizer",
        "approximate",
        "--json",
    )
    assert approx.returncode == 0, approx.stderr
    assert json.loads(approx.stdout)["estimated"] is True
    exact = cli(
        config_env,
        str(workspace),
        "--agent",
        "contract-agent",
        "--tokenizer",
        f"tiktoken:{cl100k_file}",
        "--json",
    )
    assert exact.returncode == 0, exact.stderr
    assert json.loads(exact.stdout)["estimated"] is False


@pytest.mark.parametrize(
    "args",
    [
        ["{missing}", "--agent", "contract-agent"],
        ["{ws}", "--agent", "no-such-agent"],
        ["{ws}", "--agent", "contract-agent", "--budget", "identity=abc"],
        ["{ws}", "--agent", "contract-agent", "--budget", "identity"],
        ["{ws}", "--agent", "contract-agent", "--budget", "bogus_layer=5"],
        ["{ws}", "--agent", "contract-agent", "--budget", "identity=-3"],
    ],
    ids=[
        "missing-workspace",
        "unknown-agent",
        "budget-nan",
        "budget-no-eq",
        "budget-layer",
        "budget-negative",
    ],
)
def test_cli_bad_input_exits_2_one_line_no_traceback(
    args: list[str], workspace: Path, tmp_path: Path, config_env: dict[str, str]
) -> None:
    argv = [a.format(ws=workspace, missing=tmp_path / "does-not-exist") for a in args]
    res = cli(config_env, *argv)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert res.stdout == ""


def test_cli_unknown_agent_message_names_slugs(workspace: Path, config_env: dict[str, str]) -> None:
    res = cli(config_env, str(workspace), "--agent", "no-such-agent")
    assert res.returncode == 2
    assert "contract-agent" in res.stderr


def without_clock(manifest: dict[str, Any]) -> dict[str, Any]:
    """A build's manifest minus its clock readings (``now``, each unit's ``observed_at``):
    two builds of the same inputs differ only there (CONTRACT.md section 10)."""
    return json.loads(
        json.dumps(manifest), object_hook=lambda d: {k: v for k, v in d.items() if k not in _CLOCK}
    )


_CLOCK = ("now", "observed_at")
