"""Harness configuration: budgets, strategies, tokenizer and the input envelope, from TOML.

::

    from harness import load_config

    config = load_config("config/harness.toml")     # or load_config(): $HARNESS_CONFIG / shipped
    print(config.envelope.input_tokens, config.budgets.as_mapping())

The numbers that shape every prompt live in one validated, immutable value, so a bad setting
fails at load time with the offending key named. The layer budgets must fit the input
envelope: the model's context limit minus the space reserved for the response and for tool
observations, which is what the prompt may use.

Where the configuration comes from, first match wins: the ``path`` argument of
``load_config``, else the ``HARNESS_CONFIG`` environment variable, else the shipped
``config/harness.toml`` (whose values are also the field defaults of ``HarnessConfig``).
"""

from __future__ import annotations

import functools
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness._agents import Roster, validate_entries
from harness._project_root import DEFAULT_MARKERS, check_markers
from harness._tokenizer import Tokenizer, parse_tokenizer_spec, resolve_tokenizer_spec
from harness.errors import ConfigError
from harness.instruction_files import InstructionFilesSettings
from harness.instruction_files.discovery.formats import check_formats
from harness.prompt_assembler import (
    DEFAULT_BUDGETS,
    DEFAULT_LAYOUT,
    DEFAULT_STRATEGIES,
    LAYERS,
    Layout,
    Strategy,
    check_envelope,
)
from harness.prompt_assembler._layout import check_layout, named_layout
from harness.skills._settings import (
    DEFAULT_SKILLS_DIRS,
    check_skills_dirs,
    check_user_skills_dirs,
)
from harness.workspace.deny import DEFAULT_DENY_READ

__all__ = [
    "ConfigError",
    "Envelope",
    "HarnessConfig",
    "HooksSettings",
    "LayerBudgets",
    "LayerStrategies",
    "ProjectContextSettings",
    "SupervisorSettings",
    "load_config",
    "load_roster",
    "make_tokenizer",
    "shipped_config_dir",
]

ENV_VAR = "HARNESS_CONFIG"
_PACKAGE_DIR = Path(__file__).resolve().parent


def shipped_config_dir() -> Path:
    """The directory holding the shipped ``harness.toml`` and ``agents.toml``.

    An installed wheel carries it as ``harness/_config``; a source checkout as ``config/``.
    """
    for candidate in (_PACKAGE_DIR / "_config", _PACKAGE_DIR.parent / "config"):
        if (candidate / "harness.toml").is_file():
            return candidate
    raise ConfigError(
        "the shipped configuration is missing (looked for harness/_config/harness.toml and "
        "config/harness.toml); reinstall harness or set HARNESS_CONFIG to a config file"
    )


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Envelope(_Frozen):
    """The model's context limit and what is held back from it (for the response and for tool
    observations); the rest, ``input_tokens``, is what the prompt may use."""

    model_context_limit: int = Field(default=131072, gt=0, strict=True)
    reserved_response: int = Field(default=8192, ge=0, strict=True)
    reserved_tool_observations: int = Field(default=16384, ge=0, strict=True)

    @property
    def input_tokens(self) -> int:
        """The input envelope: limit - reserved response - reserved tool observations."""
        return self.model_context_limit - self.reserved_response - self.reserved_tool_observations

    @model_validator(mode="after")
    def _leaves_room(self) -> Envelope:
        if self.input_tokens <= 0:
            raise ValueError(
                f"the reserves ({self.reserved_response} response + "
                f"{self.reserved_tool_observations} tool observations) leave no input envelope "
                f"inside model_context_limit {self.model_context_limit}: lower the reserves or "
                "raise the limit"
            )
        return self


class LayerBudgets(_Frozen):
    """Token budget per prompt layer; omitted layers keep the assembler's defaults."""

    identity: int = Field(default=DEFAULT_BUDGETS["identity"], ge=0, strict=True)
    instruction_files: int = Field(default=DEFAULT_BUDGETS["instruction_files"], ge=0, strict=True)
    project_context: int = Field(default=DEFAULT_BUDGETS["project_context"], ge=0, strict=True)
    business_rules: int = Field(default=DEFAULT_BUDGETS["business_rules"], ge=0, strict=True)
    task_state: int = Field(default=DEFAULT_BUDGETS["task_state"], ge=0, strict=True)

    def as_mapping(self) -> dict[str, int]:
        """``{layer: budget}`` in ``LAYERS`` order."""
        return {layer: int(getattr(self, layer)) for layer in LAYERS}

    @property
    def total(self) -> int:
        return sum(self.as_mapping().values())


class LayerStrategies(_Frozen):
    """Trimming strategy per prompt layer; omitted layers keep the assembler's defaults."""

    identity: Strategy = DEFAULT_STRATEGIES["identity"]
    instruction_files: Strategy = DEFAULT_STRATEGIES["instruction_files"]
    project_context: Strategy = DEFAULT_STRATEGIES["project_context"]
    business_rules: Strategy = DEFAULT_STRATEGIES["business_rules"]
    task_state: Strategy = DEFAULT_STRATEGIES["task_state"]

    def as_mapping(self) -> dict[str, Strategy]:
        """``{layer: strategy}`` in ``LAYERS`` order."""
        return {layer: Strategy(getattr(self, layer)) for layer in LAYERS}


class ProjectContextSettings(_Frozen):
    """How the ``.AGENTS/`` directory is read."""

    max_file_bytes: int = Field(default=65536, gt=0, strict=True)


class SupervisorSettings(_Frozen):
    """The Harness supervisor's restart intensity: more than ``max_restarts`` restarts within
    ``max_seconds`` (sliding window) stop the tree with ``MaxRestartsExceeded``.

    The default is generous on purpose. The only child is the instruction-files cache, which
    holds nothing but a table that is rebuilt on demand, and ``load`` keeps answering
    (uncached) while it is down; so a storm of cache restarts must not end the Harness. OTP's
    usual 3-in-5 s would. A true crash loop is still bounded: a crash and restart of the cache
    costs about 125 us of CPU (measured on a shared 2-CPU VM), so 1000 restarts in 10 s caps a
    loop at roughly 1% of one CPU before the tree gives up.
    """

    max_restarts: int = Field(default=1000, ge=0, strict=True)
    max_seconds: float = Field(default=10.0, gt=0, allow_inf_nan=False, strict=True)


class HooksSettings(_Frozen):
    """How command hooks are run: ``env_allowlist`` is the environment they get.

    ``None`` (the default) passes the engine's whole environment on, secrets included, as
    Claude Code does; a list passes only those variables (when set) plus
    ``CLAUDE_PROJECT_DIR``. Pass it on when loading hook settings::

        settings = load_hook_settings(path, cwd=ws, env_allowlist=config.hooks.env_allowlist)
    """

    env_allowlist: tuple[str, ...] | None = None

    @field_validator("env_allowlist")
    @classmethod
    def _names(cls, names: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for name in names or ():
            if not name or "=" in name or "\0" in name:
                raise ValueError(
                    f"{name!r} is not an environment variable name: give names such as "
                    '"PATH" or "HOME", without "=" or NUL'
                )
        return names


class HarnessConfig(_Frozen):
    """Everything that shapes a prompt, validated and immutable.

    Construct it directly (defaults equal the shipped ``config/harness.toml``) or with
    ``load_config``. Validation, the envelope check included, runs on construction, so derive
    variants through it: ``HarnessConfig.model_validate({**config.model_dump(), ...})`` or
    ``with_agents`` (``model_copy(update=...)`` would skip validation). A relative
    ``agents_file`` given here is relative to the working directory.
    """

    tokenizer: str = "approximate"
    envelope: Envelope = Envelope()
    budgets: LayerBudgets = LayerBudgets()
    strategies: LayerStrategies = LayerStrategies()
    layout: Layout = DEFAULT_LAYOUT
    """The prompt's layers in order; TOML ``[layout] layers = ["identity", ...]``."""
    agents_file: Path | None = None
    agents: dict[str, str] = Field(default_factory=dict)
    instruction_files: InstructionFilesSettings = Field(default_factory=InstructionFilesSettings)
    project_context: ProjectContextSettings = ProjectContextSettings()
    supervisor: SupervisorSettings = SupervisorSettings()
    hooks: HooksSettings = HooksSettings()
    """Command hooks' settings; TOML ``[hooks] env_allowlist = [...]``."""
    project_root_markers: tuple[str, ...] = DEFAULT_MARKERS
    formats: tuple[str, ...] = Field(default=("agents",), min_length=1)
    copilot_agent: str = Field(default="coding-agent", min_length=1)
    skills_dirs: tuple[str, ...] = DEFAULT_SKILLS_DIRS
    """Skills directories, relative to the root and to each directory on the targets' chains."""
    user_skills_dirs: tuple[str, ...] = ()
    """Absolute skills directories of the user; never read unless listed here."""
    deny_read: tuple[str, ...] = DEFAULT_DENY_READ
    """Workspace paths never opened (``.gitignore`` patterns); a configured list replaces
    the default one."""

    @field_validator("skills_dirs")
    @classmethod
    def _skills_dirs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_skills_dirs(value)

    @field_validator("user_skills_dirs")
    @classmethod
    def _user_skills_dirs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_user_skills_dirs(value)

    @field_validator("formats")
    @classmethod
    def _formats(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_formats(value)

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer_spec(cls, value: str) -> str:
        parse_tokenizer_spec(value)
        return value

    @field_validator("layout", mode="before")
    @classmethod
    def _layout(cls, value: object) -> object:
        if isinstance(value, Mapping):
            if set(value) != {"layers"}:
                raise ValueError('[layout] takes one key, layers = ["identity", ...]')
            return named_layout(value["layers"])
        return value

    @field_validator("project_root_markers")
    @classmethod
    def _markers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_markers(value)

    @field_validator("agents")
    @classmethod
    def _agents(cls, value: dict[str, str]) -> dict[str, str]:
        return validate_entries(value)

    @model_validator(mode="after")
    def _budgets_fit_envelope(self) -> HarnessConfig:
        check_layout(self.layout)
        check_envelope(self.layout_budgets(), self.envelope)
        return self

    def layout_budgets(self) -> dict[str, int]:
        """Each layer of ``layout``: its ``[budgets]`` value, else the layout's own budget."""
        configured = self.budgets.as_mapping()
        return {spec.name: configured.get(spec.name, spec.budget) for spec in self.layout}

    def layout_strategies(self) -> dict[str, Strategy]:
        """Each layer of ``layout``: its ``[strategies]`` value when one was set to other
        than the five layers' defaults, else the layout's own (so ``EXTENDED_LAYOUT``'s
        ``fit_whole_units`` holds under a config file listing the defaults)."""
        chosen = self.strategies
        configured = {
            name: value
            for name, value in chosen.as_mapping().items()
            if name in chosen.model_fields_set and value != DEFAULT_STRATEGIES[name]
        }
        return {spec.name: configured.get(spec.name, spec.strategy) for spec in self.layout}

    def roster(self) -> Roster:
        """The agent roster: ``agents_file`` (default: the shipped one) plus ``agents``."""
        base = load_roster(self.agents_file)
        return base.extend(self.agents) if self.agents else base

    def with_agents(self, agents: Mapping[str, str]) -> HarnessConfig:
        """A copy whose roster also has ``agents`` (replacing slugs that already exist)."""
        data = self.model_dump()
        data["agents"] = {**self.agents, **agents}
        return HarnessConfig.model_validate(data)


def _problems(error: ValidationError) -> str:
    """One line per problem, each naming its key path (``budgets.identity``)."""
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
        lines.append(f"{key}: {message}" if key else message)
    return "; ".join(lines)


def _read_toml(path: Path, origin: str) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} ({origin}) does not exist") from None
    except OSError as exc:
        raise ConfigError(f"config file {path} ({origin}) cannot be read: {exc}") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None


def load_config(path: str | os.PathLike[str] | None = None) -> HarnessConfig:
    """Load a ``HarnessConfig``: ``path``, else ``$HARNESS_CONFIG``, else the shipped file.

    A file only needs the keys it changes; the rest keep their defaults. Relative paths in
    the file (``agents_file``, a ``tiktoken:`` rank file) are relative to the file. Raises
    ``ConfigError`` naming the key for invalid TOML, unknown keys, bad values, budgets that
    overflow the envelope, and an unreadable roster.
    """
    if path is not None:
        file, origin = Path(path), "the path argument"
    elif os.environ.get(ENV_VAR):
        file, origin = Path(os.environ[ENV_VAR]), f"from ${ENV_VAR}"
    else:
        file, origin = shipped_config_dir() / "harness.toml", "the shipped defaults"
    data = _read_toml(file, origin)
    agents_file = data.get("agents_file")
    if agents_file == "":
        del data["agents_file"]
    elif isinstance(agents_file, str) and agents_file and not Path(agents_file).is_absolute():
        data["agents_file"] = str(file.absolute().parent / agents_file)
    tokenizer = data.get("tokenizer")
    if isinstance(tokenizer, str):
        data["tokenizer"] = resolve_tokenizer_spec(tokenizer, file.absolute().parent)
    try:
        config = HarnessConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config file {file}: {_problems(exc)}") from None
    try:
        config.roster()
    except ConfigError as exc:
        raise ConfigError(f"config file {file}: {exc}") from None
    return config


@functools.lru_cache(maxsize=16)
def _roster_from(path: Path, version: tuple[int, ...]) -> Roster:
    data = _read_toml(path, "the agent roster")
    try:
        return Roster(data)
    except ValueError as exc:
        raise ConfigError(f"agent roster {path}: {exc}") from None


def _version(path: Path) -> tuple[int, ...]:
    """What changes when the file is edited or replaced: a cached roster is keyed by it."""
    try:
        info = path.stat()
    except OSError:
        return ()  # reading it reports the problem
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_dev)


def load_roster(path: str | os.PathLike[str] | None = None) -> Roster:
    """Read a roster file (``slug = "identity line"`` per line); default: the shipped one.

    Parsed rosters are cached by resolved path and the file's modification time, size and
    inode: an edited or replaced roster file is read again.
    """
    file = (Path(path) if path is not None else shipped_config_dir() / "agents.toml").resolve()
    return _roster_from(file, _version(file))


def make_tokenizer(spec: str) -> Tokenizer:
    """Build the tokenizer a spec names: ``approximate`` or ``tiktoken:NAME_OR_PATH``.

    tiktoken is imported only here and only for a ``tiktoken:`` spec, so the command line
    and the default path never pay for it.
    """
    try:
        parsed = parse_tokenizer_spec(spec)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return parsed.build()
