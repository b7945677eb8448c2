"""Settings of instruction-file discovery and its cache (the ``[instruction_files]`` TOML table).

Build them in code, or let ``harness.load_config`` read them from TOML::

    from harness.instruction_files import InstructionFilesSettings

    settings = InstructionFilesSettings(names=("AGENTS.md",), cache_ttl=30.0)
    assert settings.max_bytes > 0
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.workspace._vendored import DEFAULT_VENDORED
from harness.workspace.deny import DEFAULT_DENY_READ

DEFAULT_NAMES: tuple[str, ...] = ("AGENTS.override.md", "AGENTS.md")

__all__ = ["DEFAULT_NAMES", "DEFAULT_VENDORED", "InstructionFilesSettings"]


def _plain_names(values: tuple[str, ...], what: str) -> tuple[str, ...]:
    for value in values:
        if not value or value in (".", "..") or "/" in value or "\\" in value or "\0" in value:
            raise ValueError(
                f"{what} entry {value!r} is not a plain file name: use a bare name such as "
                "'AGENTS.md', without any directory part"
            )
    if len(set(values)) != len(values):
        raise ValueError(f"{what} lists a name twice: {list(values)!r}")
    return values


class InstructionFilesSettings(BaseModel):
    """How instruction files are found, read and cached.

    - ``names``: per directory, the first REGULAR file among these names is that directory's
      instruction file (default ``AGENTS.override.md`` then ``AGENTS.md``).
    - ``vendored``: directory names never entered, at any depth (``.git`` is never entered
      whatever this says).
    - ``max_bytes``: files larger than this are skipped with a warning (never truncated).
    - ``cache_maxsize`` / ``cache_ttl``: size of the cache table (LRU) and an optional
      time-to-live in seconds (``None``: entries live until ``invalidate`` or eviction).
    - ``database_timeout``: seconds to wait on a locked database before giving up (SQLite);
      the statement timeout of a PostgreSQL database.
    - ``listener_heartbeat``: with a PostgreSQL database, a lost change-notice connection is
      noticed within this many seconds (its rows stop being served from the cache at once).
    - ``formats``: the rule formats read, in precedence order within one directory (default
      ``("agents",)``; also ``"claude"``, ``"gemini"``, ``"copilot"``, ``"cursor"``,
      ``"windsurf"``, ``"cline"``). A ``Harness``
      sets it from the configuration's top-level ``formats``.
    - ``copilot_agent``: which of Copilot's agent kinds this engine is (``"coding-agent"``
      or ``"code-review"``): a Copilot instructions file whose ``excludeAgent`` names it is
      not read as a source. A ``Harness`` sets it from the top-level ``copilot_agent``.
    - ``project_root_markers``: what marks a project's root (a ``Harness`` sets it from the
      top-level key): files of the configured formats between the project root above a
      workspace and the workspace are named in a warning (they are not read).
    - ``deny_read``: ``.gitignore`` patterns of paths never opened, not even to look
      (default ``harness.workspace.deny.DEFAULT_DENY_READ``); a ``Harness`` sets it from the
      configuration's top-level ``deny_read``.
    - ``walk_threads``: threads that walk a workspace (``None``: 1 on a machine with at most
      two CPUs, where extra threads measured slower, else 4).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    names: tuple[str, ...] = Field(default=DEFAULT_NAMES, min_length=1)
    vendored: tuple[str, ...] = DEFAULT_VENDORED
    max_bytes: int = Field(default=256 * 1024, gt=0, strict=True)
    cache_maxsize: int = Field(default=256, gt=0, strict=True)
    cache_ttl: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    database_timeout: float = Field(default=5.0, ge=0, allow_inf_nan=False, strict=True)
    listener_heartbeat: float = Field(default=5.0, gt=0, allow_inf_nan=False, strict=True)
    walk_threads: int | None = Field(default=None, ge=1, le=64, strict=True)
    formats: tuple[str, ...] = Field(default=("agents",), min_length=1)
    copilot_agent: str = Field(default="coding-agent", min_length=1)
    project_root_markers: tuple[str, ...] = (".git",)
    deny_read: tuple[str, ...] = DEFAULT_DENY_READ

    @field_validator("names")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _plain_names(value, "names")

    @field_validator("formats")
    @classmethod
    def _formats(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"formats lists a format twice: {list(value)!r}")
        return value

    @field_validator("vendored")
    @classmethod
    def _vendored(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _plain_names(value, "vendored")
