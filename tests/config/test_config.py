"""Configuration: shipped defaults, precedence, the envelope check and typed errors."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pydantic
import pytest

from harness import ConfigError, HarnessConfig, load_config
from harness.config import shipped_config_dir
from harness.instruction_files import InstructionFilesSettings
from harness.prompt_assembler import DEFAULT_BUDGETS, DEFAULT_STRATEGIES

SHIPPED = Path(__file__).resolve().parents[2] / "config" / "harness.toml"


def test_shipped_budgets_and_strategies_equal_the_assembler_defaults() -> None:
    data = tomllib.loads(SHIPPED.read_text(encoding="utf-8"))
    assert data["budgets"] == dict(DEFAULT_BUDGETS)
    assert data["strategies"] == {k: str(v) for k, v in DEFAULT_STRATEGIES.items()}
    config = load_config()
    assert config.budgets.as_mapping() == dict(DEFAULT_BUDGETS)
    assert config.strategies.as_mapping() == dict(DEFAULT_STRATEGIES)


def test_shipped_file_equals_the_model_defaults() -> None:
    assert shipped_config_dir() / "harness.toml" == SHIPPED
    assert load_config() == HarnessConfig()
    assert load_config().instruction_files == InstructionFilesSettings()


def test_every_key_in_the_shipped_config_is_documented() -> None:
    previous = ""
    for line in SHIPPED.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if re.match(r"^(\[[\w.]+\]|[A-Za-z_]\w*\s*=)", stripped):
            assert previous.startswith("#"), f"undocumented setting: {stripped!r}"
        if stripped:
            previous = stripped


def test_shipped_envelope_has_room_for_the_budgets() -> None:
    config = load_config()
    assert config.envelope.input_tokens == 131072 - 8192 - 16384 == 106496
    assert config.budgets.total <= config.envelope.input_tokens


def test_precedence_path_then_env_then_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_env = tmp_path / "env.toml"
    from_env.write_text("[budgets]\nidentity = 111\n", encoding="utf-8")
    from_arg = tmp_path / "arg.toml"
    from_arg.write_text("[budgets]\nidentity = 222\n", encoding="utf-8")

    assert load_config().budgets.identity == DEFAULT_BUDGETS["identity"]
    monkeypatch.setenv("HARNESS_CONFIG", str(from_env))
    assert load_config().budgets.identity == 111
    assert load_config(from_arg).budgets.identity == 222
    # Keys a file leaves out keep their defaults.
    assert load_config(from_arg).budgets.task_state == DEFAULT_BUDGETS["task_state"]
    monkeypatch.setenv("HARNESS_CONFIG", "")
    assert load_config().budgets.identity == DEFAULT_BUDGETS["identity"]


def test_env_var_naming_a_missing_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match=r"nope\.toml.*HARNESS_CONFIG.*does not exist"):
        load_config()


def test_budgets_over_the_envelope_fail_saying_by_how_much(tmp_path: Path) -> None:
    path = tmp_path / "tight.toml"
    path.write_text(
        "[envelope]\nmodel_context_limit = 20000\nreserved_response = 1200\n"
        "reserved_tool_observations = 800\n",
        encoding="utf-8",
    )
    # 24,884 tokens of default budgets against an 18,000-token envelope.
    with pytest.raises(ConfigError, match=r"over by 6884 tokens") as caught:
        load_config(path)
    assert "18000" in str(caught.value) and "24884" in str(caught.value)

    with pytest.raises(pydantic.ValidationError, match=r"over by 1 tokens"):
        HarnessConfig(
            envelope={
                "model_context_limit": 24883,
                "reserved_response": 0,
                "reserved_tool_observations": 0,
            }  # type: ignore[arg-type]
        )
    exact = HarnessConfig(
        envelope={
            "model_context_limit": 24884,
            "reserved_response": 0,
            "reserved_tool_observations": 0,
        }  # type: ignore[arg-type]
    )
    assert exact.envelope.input_tokens == exact.budgets.total


def test_reserves_larger_than_the_limit_are_rejected() -> None:
    with pytest.raises(pydantic.ValidationError, match="leave no input envelope"):
        HarnessConfig(envelope={"model_context_limit": 1000, "reserved_response": 1000})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[budgets\n", r"not valid TOML"),
        ("[budgets]\nidentty = 5\n", r"budgets\.identty: unknown key"),
        ("colour = 'blue'\n", r"colour: unknown key"),
        ("[budgets]\nidentity = -1\n", r"budgets\.identity: .*greater than or equal to 0"),
        ("[budgets]\nidentity = 'lots'\n", r"budgets\.identity: .*integer"),
        ("[strategies]\nidentity = 'shred'\n", r"strategies\.identity: .*keep_or_drop"),
        ("tokenizer = 'sentencepiece'\n", r"tokenizer: .*'approximate' or 'tiktoken:"),
        ("[agents]\n'Bad Slug' = 'x'\n", r"agents: .*'Bad Slug' is invalid"),
        ("[instruction_files]\nmax_bytes = 0\n", r"instruction_files\.max_bytes"),
        ("[project_context]\nmax_file_bytes = 0\n", r"project_context\.max_file_bytes"),
        ("[supervisor]\nmax_restarts = -1\n", r"supervisor\.max_restarts: .*greater than or"),
        ("[supervisor]\nmax_restarts = true\n", r"supervisor\.max_restarts: .*integer"),
        ("[supervisor]\nmax_seconds = 0\n", r"supervisor\.max_seconds: .*greater than 0"),
        ("[supervisor]\nmax_seconds = inf\n", r"supervisor\.max_seconds: .*finite"),
        ("[supervisor]\nmax_restart = 5\n", r"supervisor\.max_restart: unknown key"),
        # A boolean is not a number, even though Python would let it pass for 1 or 0.
        ("[budgets]\nidentity = true\n", r"budgets\.identity: .*integer"),
        ("[instruction_files]\nmax_bytes = true\n", r"instruction_files\.max_bytes: .*integer"),
        ("[instruction_files]\ndatabase_timeout = false\n", r"database_timeout: .*number"),
        ("[instruction_files]\ndatabase_timeout = nan\n", r"database_timeout: .*finite"),
        ("[project_context]\nmax_file_bytes = true\n", r"max_file_bytes: .*integer"),
        ("[envelope]\nreserved_response = false\n", r"envelope\.reserved_response: .*integer"),
    ],
)
def test_bad_files_raise_config_error_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        load_config(path)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_agents_table_and_relative_agents_file(tmp_path: Path) -> None:
    (tmp_path / "team.toml").write_text('scout = "You are the scout."\n', encoding="utf-8")
    path = tmp_path / "harness.toml"
    path.write_text(
        'agents_file = "team.toml"\n[agents]\nmedic = "You are the medic."\n', encoding="utf-8"
    )
    roster = load_config(path).roster()
    assert dict(roster) == {"medic": "You are the medic.", "scout": "You are the scout."}


def test_missing_agents_file_fails_at_load(tmp_path: Path) -> None:
    path = tmp_path / "harness.toml"
    path.write_text('agents_file = "missing.toml"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"missing\.toml"):
        load_config(path)


def test_config_is_immutable() -> None:
    config = HarnessConfig()
    with pytest.raises(pydantic.ValidationError):
        config.tokenizer = "tiktoken:cl100k_base"


def test_supervisor_intensity_default_survives_a_restart_storm_and_is_configurable(
    tmp_path: Path,
) -> None:
    """The shipped intensity is generous (the cache child is cheap to lose) but finite."""
    default = load_config().supervisor
    assert (default.max_restarts, default.max_seconds) == (1000, 10.0)
    assert HarnessConfig().supervisor == default
    path = tmp_path / "strict.toml"
    path.write_text("[supervisor]\nmax_restarts = 0\n", encoding="utf-8")
    strict = load_config(path).supervisor
    assert (strict.max_restarts, strict.max_seconds) == (0, 10.0)


def test_a_relative_rank_file_is_relative_to_the_config_file(
    tmp_path: Path, cl100k_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness import Harness

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "cl100k_base.tiktoken").write_bytes(cl100k_file.read_bytes())
    path = tmp_path / "harness.toml"
    path.write_text('tokenizer = "tiktoken:models/cl100k_base.tiktoken"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path.parent)  # not the config file's directory
    config = load_config(path)
    assert config.tokenizer == f"tiktoken:{tmp_path / 'models' / 'cl100k_base.tiktoken'}"
    assert Harness(config).tokenizer().count("hello world") == 2
    missing = tmp_path / "missing.toml"
    missing.write_text('tokenizer = "tiktoken:nope/cl100k_base.tiktoken"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="no such rank file"):
        Harness(load_config(missing))  # at construction, not on the first prompt


def test_relative_paths_survive_a_change_of_directory(
    tmp_path: Path, cl100k_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config named by a relative path: its relative paths become absolute at load, and a
    relative database path at construction, so an engine that changes directory later keeps
    working."""
    import shutil

    from harness import Harness

    config_dir = tmp_path / "cfg"
    (config_dir / "sub").mkdir(parents=True)
    shutil.copy(cl100k_file, config_dir / "sub" / "cl100k_base.tiktoken")
    (config_dir / "sub" / "roster.toml").write_text('helper = "You are the helper."\n')
    (config_dir / "harness.toml").write_text(
        'agents_file = "sub/roster.toml"\ntokenizer = "tiktoken:sub/cl100k_base.tiktoken"\n'
    )
    (tmp_path / "db.sqlite").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    config = load_config("cfg/harness.toml")
    harness = Harness(config, database="db.sqlite")
    monkeypatch.chdir("/")
    assert harness.database == tmp_path / "db.sqlite"
    assert Harness(config).roster.identity("helper") == "You are the helper."
    assert harness.tokenizer().count("hello world") == 2


@pytest.mark.parametrize("names", ['[""]', '["A=B"]', '"PATH"', "[1]"])
def test_a_bad_hooks_env_allowlist_names_the_key(tmp_path: Path, names: str) -> None:
    toml = tmp_path / "harness.toml"
    toml.write_text(f"[hooks]\nenv_allowlist = {names}\n")
    with pytest.raises(ConfigError, match="env_allowlist"):
        load_config(toml)
