"""Reliability scenarios shared by the reliability tests (``tests/instruction_files/test_chaos.py``,
``tests/hooks/test_hooks_random.py``, ...) and ``benchmarks/reliability.py``.

Each scenario attacks the whole library (real files, real symlinks, real SQLite databases, the
real supervision tree) and returns ``Figures``: operations attempted, faults injected, wrong
results, hung callers, leaked tasks and leaked file descriptors. The tests run the scenarios
small and assert every bad figure is zero; the benchmark runs them large and prints the table.

Oracles are deliberately simple and independent of the code under test:

- chaos: every file and database row carries a version number. The oracle tracks, per cache key,
  the newest version whose write had completed when an ``invalidate`` covering that key
  returned. A load must return, for every source, a version at least that (recorded the moment
  the load starts) and at most the newest version written, from the right workspace, project and
  agent -- or a typed error.
- lifecycle: counts of live asyncio tasks, open descriptors and traced memory before and after.
- hooks: a ten-line fold over the handlers' scripted behaviours.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import html
import logging
import os
import random
import re
import sqlite3
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread

from harness import Halt, HookOutcome, Hooks, HookTimeoutError
from harness._harness import Harness
from harness.config import HarnessConfig
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionStoreError,
    WorkspaceNotFoundError,
    create_schema,
)
from harness.runtime import ChildSpec, MaxRestartsExceeded, Supervisor

__all__ = [
    "CACHE_CHILD",
    "CacheKiller",
    "ChaosWorld",
    "Figures",
    "LifecycleFigures",
    "Resources",
    "cache_task",
    "quiet_logs",
    "run_chaos",
    "run_hook_chains",
    "run_lifecycle",
]

CACHE_CHILD = "instruction_files_cache"
TYPED_ERRORS: tuple[type[Exception], ...] = (InstructionStoreError, WorkspaceNotFoundError)


def db_path(project_id: str, agent: str) -> str:
    """The expected path of a database source: ids verbatim but '%', '/', control characters
    and lone surrogates percent-encoded (UTF-8 bytes)."""

    def encode(part: str) -> str:
        def one(char: str) -> str:
            code = ord(char)
            if char in "%/" or code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF:
                return "".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))
            return char

        return "".join(one(char) for char in part)

    return f"db:{encode(project_id)}/{encode(agent)}"


# ------------------------------------------------------------------------------------------
# Figures and resource accounting


@dataclass
class Figures:
    """The figures of one scenario run; every "bad" figure must be zero."""

    scenario: str
    operations: int = 0
    faults: int = 0
    wrong: int = 0
    hung: int = 0
    leaked_tasks: int = 0
    leaked_fds: int = 0
    typed_errors: int = 0
    cancelled: int = 0
    seconds: float = 0.0
    escalation: str | None = None  # MaxRestartsExceeded left the tree, if it did
    problems: list[str] = field(default_factory=list)

    def wrong_result(self, problem: str) -> None:
        self.wrong += 1
        if len(self.problems) < 25:
            self.problems.append(problem)

    def hang(self, what: str) -> None:
        self.hung += 1
        if len(self.problems) < 25:
            self.problems.append(f"hung: {what}")

    @property
    def clean(self) -> bool:
        return not (self.wrong or self.hung or self.leaked_tasks or self.leaked_fds)

    def summary(self) -> str:
        return (
            f"{self.scenario}: ops={self.operations} faults={self.faults} wrong={self.wrong} "
            f"hung={self.hung} leaked_tasks={self.leaked_tasks} leaked_fds={self.leaked_fds} "
            f"typed_errors={self.typed_errors} cancelled={self.cancelled} "
            f"escalation={self.escalation}; " + "; ".join(self.problems[:5])
        )


def open_fds() -> dict[int, str]:
    """This process's open descriptors and what they point at (from /proc/self/fd)."""
    result: dict[int, str] = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            result[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return result


def live_tasks() -> set[asyncio.Task[Any]]:
    return {task for task in asyncio.all_tasks() if not task.done()}


@dataclass
class Resources:
    """A before-snapshot of tasks and descriptors; ``leaks()`` compares against it.

    Descriptors and tasks can outlive a call by a moment for good reasons (a worker thread
    abandoned by a cancelled load finishes its current directory; a done-callback has yet to
    run), so ``leaks`` polls for up to ``settle`` seconds before counting what is left.
    """

    tasks: set[asyncio.Task[Any]]
    fds: dict[int, str]

    @classmethod
    def snapshot(cls) -> Resources:
        return cls(live_tasks(), open_fds())

    async def leaks(self, settle: float = 3.0) -> tuple[list[str], list[str]]:
        with anyio.move_on_after(settle):
            while True:
                gc.collect()
                tasks, fds = self._diff()
                if not tasks and not fds:
                    break
                await anyio.sleep(0.02)
        return self._diff()

    def _diff(self) -> tuple[list[str], list[str]]:
        tasks = sorted(task.get_name() for task in live_tasks() - self.tasks)
        now = open_fds()
        fds = sorted(f"{fd} -> {target}" for fd, target in now.items() if fd not in self.fds)
        return tasks, fds


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Silence the library's (expected, abundant) error logs while faults are injected.

    Log capture would otherwise retain thousands of records, which both floods output and
    shows up as "memory growth" in the lifecycle figures.
    """
    logger = logging.getLogger("harness")
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.CRITICAL + 1)
    logger.propagate = False
    try:
        yield
    finally:
        logger.setLevel(level)
        logger.propagate = propagate


# ------------------------------------------------------------------------------------------
# Killing the cache task


def cache_task() -> asyncio.Task[Any] | None:
    """The running instruction-files cache task, found by the name the supervisor gives it."""
    for task in asyncio.all_tasks():
        if task.get_name().endswith(f"/{CACHE_CHILD}") and not task.done():
            return task
    return None


class CacheKiller:
    """Kills the cache task, at most once per incarnation, one of two ways.

    ``task.cancel()`` from outside is the brutal kill (like ``Process.exit(pid, :kill)``);
    ``_crash_cache`` makes the task raise, the drill hook the instruction-files module offers.
    A kill only counts when it hits an incarnation not already killed (a dying task still
    looks "running" for a moment).
    """

    def __init__(self, files: InstructionFiles, rng: random.Random) -> None:
        self.files = files
        self.rng = rng
        self.last: asyncio.Task[Any] | None = None

    def can_kill(self) -> bool:
        """A fresh incarnation is up (the last one killed has been replaced)."""
        task = cache_task()
        return task is not None and task is not self.last and self.files.cache_running

    def kill(self) -> bool:
        task = cache_task()
        if task is None or task is self.last or not self.files.cache_running:
            return False
        self.last = task
        if self.rng.random() < 0.5:
            task.cancel()
            return True
        return self.files._crash_cache()


# ------------------------------------------------------------------------------------------
# Chaos: a versioned world of workspaces, projects and agents


FILES: tuple[str, ...] = ("AGENTS.md", "pkg/AGENTS.md", "pkg/deep/AGENTS.override.md")
DECOY = "pkg/deep/AGENTS.md"  # shadowed by AGENTS.override.md: must never be loaded
HOSTILE_PROJECTS: tuple[str, ...] = (
    "acme",
    "ACME",
    "acme ",
    "acme'; DROP TABLE agent_instructions; --",
    "../acme",
    "acme%",
    "ghost",  # no rows at all
)
_FILE_TEXT = re.compile(r"ws(\d+) (\S+) v(\d+)\n")
_ROW_TEXT = re.compile(r"row\|(\d+)\|(\d+)\|v(\d+)")
_BLOCK = re.compile(r'<context path="([^"]*)">\n(.*?)\n</context>', re.DOTALL)

Key = tuple[int, str | None, str]  # (workspace index, project_id, agent)
Component = tuple[str, int | str, int | str]  # ("f", workspace, file index) | ("r", project, agent)


class ChaosWorld:
    """Workspaces on disk and rows in SQLite, every one carrying a version, plus the oracle."""

    def __init__(
        self,
        root: Path,
        *,
        workspaces: int,
        projects: Sequence[str] = HOSTILE_PROJECTS,
        agents: Sequence[str] = ("reviewer", "planner", "x' OR '1'='1"),
        seed: int = 0,
    ) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.projects = tuple(projects)
        self.agents = tuple(agents)
        self.workspaces = [root / f"ws{w}" for w in range(workspaces)]
        self.aliases = [root / f"alias{w}" for w in range(workspaces)]
        self.database = root / "instructions.db"
        self.written: dict[Component, int] = {}
        self.done: dict[Component, int] = {}
        # Rows exist for every project but "ghost", and not for the last agent of "ACME".
        self.rows = {
            (p, a)
            for p in self.projects
            if p != "ghost"
            for a in self.agents
            if not (p == "ACME" and a == self.agents[-1])
        }
        for w, ws in enumerate(self.workspaces):
            for i, rel in enumerate(FILES):
                (ws / rel).parent.mkdir(parents=True, exist_ok=True)
                (ws / rel).write_text(self.file_text(w, i, 0), encoding="utf-8")
                self.written[("f", w, i)] = self.done[("f", w, i)] = 0
            (ws / DECOY).write_text("DECOY: shadowed by AGENTS.override.md\n", encoding="utf-8")
            self.aliases[w].symlink_to(ws, target_is_directory=True)
        create_schema(self.database)
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            for p, a in sorted(self.rows):
                db.execute(
                    "INSERT INTO agent_instructions (project_id, agent_slug, content, updated_at)"
                    " VALUES (?, ?, ?, '2026-01-01T00:00:00Z')",
                    (p, a, self.row_text(p, a, 0)),
                )
                self.written[("r", p, a)] = self.done[("r", p, a)] = 0
            db.commit()
        self.keys: list[Key] = [
            (w, p, a)
            for w in range(workspaces)
            for p in (None, *self.projects)
            for a in self.agents
        ]
        self.floor: dict[Key, dict[Component, int]] = {
            key: {c: 0 for c in self.components(key)} for key in self.keys
        }

    # -- content ---------------------------------------------------------------------------

    @staticmethod
    def file_text(w: int, i: int, version: int) -> str:
        return f"ws{w} {FILES[i]} v{version}\n"

    def row_text(self, p: str, a: str, version: int) -> str:
        return f"row|{self.projects.index(p)}|{self.agents.index(a)}|v{version}"

    def components(self, key: Key) -> list[Component]:
        w, p, a = key
        comps: list[Component] = [("f", w, i) for i in range(len(FILES))]
        if p is not None and (p, a) in self.rows:
            comps.append(("r", p, a))
        return comps

    def expected_paths(self, key: Key) -> list[str]:
        _, p, a = key
        paths = list(FILES)
        if p is not None and (p, a) in self.rows:
            paths.append(db_path(p, a))
        return paths

    # -- edits (each one a write, then an invalidation that covers it) ---------------------

    async def edit_file(self, w: int, i: int) -> None:
        comp: Component = ("f", w, i)
        version = self.written[comp] + 1
        self.written[comp] = version  # before the write starts: the upper bound of any read
        target = self.workspaces[w] / FILES[i]
        text = self.file_text(w, i, version)

        def write() -> None:  # atomic, as editors save: a reader sees old or new, never half
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)

        await anyio.to_thread.run_sync(write)
        self.done[comp] = version

    async def edit_row(self, p: str, a: str) -> None:
        comp: Component = ("r", p, a)
        version = self.written[comp] + 1
        self.written[comp] = version
        text = self.row_text(p, a, version)

        def write() -> None:
            with contextlib.closing(sqlite3.connect(self.database, timeout=30)) as db:
                db.execute(
                    "UPDATE agent_instructions SET content = ?, updated_at = ? "
                    "WHERE project_id = ? AND agent_slug = ?",
                    (text, f"2026-01-01T00:00:{version % 60:02d}Z", p, a),
                )
                db.commit()

        await anyio.to_thread.run_sync(write)
        self.done[comp] = version

    def invalidate(
        self,
        files: InstructionFiles,
        *,
        workspace: int | None = None,
        alias: bool = False,
        project_id: str | None = None,
        agent: str | None = None,
    ) -> None:
        """Call ``files.invalidate`` and, once it returned, raise the floor of covered keys."""
        path: Path | None = None
        if workspace is not None:
            path = (self.aliases if alias else self.workspaces)[workspace]
        files.invalidate(path, project_id=project_id, agent=agent)
        for key in self.keys:
            w, p, a = key
            if workspace is not None and w != workspace:
                continue
            if project_id is not None and p != project_id:
                continue
            if agent is not None and a != agent:
                continue
            floor = self.floor[key]
            for comp in floor:
                floor[comp] = self.done[comp]

    # -- the oracle ------------------------------------------------------------------------

    def check(
        self, key: Key, floor: dict[Component, int], pairs: Sequence[tuple[str, str]]
    ) -> str | None:
        """None if ``pairs`` ((path, content) per source) is a right, non-stale answer."""
        w, p, a = key
        paths = [path for path, _ in pairs]
        expected = self.expected_paths(key)
        if paths != expected:
            return f"{key}: sources {paths!r}, expected {expected!r}"
        for (path, content), comp in zip(pairs, self.components(key), strict=True):
            if comp[0] == "f":
                match = _FILE_TEXT.fullmatch(content)
                if match is None or (int(match[1]), match[2]) != (w, path):
                    return f"{key}: {path} holds {content!r}: not this workspace's file"
            else:
                match = _ROW_TEXT.fullmatch(content)
                want = (self.projects.index(str(p)), self.agents.index(a))
                if match is None or (int(match[1]), int(match[2])) != want:
                    return f"{key}: {path} holds {content!r}: another project's or agent's row"
            version = int(match[3])
            if version < floor[comp]:
                return (
                    f"{key}: {path} is stale: v{version}, but v{floor[comp]} was written and "
                    "invalidated before this load started"
                )
            if version > self.written[comp]:
                return f"{key}: {path} holds v{version}, never written"
        return None


@dataclass
class ChaosParams:
    workspaces: int = 4
    loaders: int = 24
    loads_per_loader: int = 60
    kills: int = 120
    kill_gap: float = 0.004  # mean seconds between kills
    file_edits: int = 80
    row_edits: int = 60
    noise_invalidations: int = 60
    cancel_rate: float = 0.04  # loads the caller itself abandons after a random moment
    build_prompt_rate: float = 0.0  # Harness only: share of operations through build_prompt
    hang_limit: float = 15.0
    seed: int = 1


async def run_chaos(
    root: Path,
    params: ChaosParams,
    *,
    harness: bool = False,
    max_restarts: int | None = None,
) -> Figures:
    """Thousands of concurrent loads while the cache task is killed again and again.

    ``harness=False`` runs ``InstructionFiles`` under a Supervisor built here with a restart
    intensity high enough to absorb every kill; ``harness=True`` runs the same traffic through
    a real ``Harness`` (its own supervision tree, ``load`` and ``build_prompt``), whose
    intensity is the config default unless ``max_restarts`` (in 5 s) is given.
    """
    name = "chaos (Harness)" if harness else "chaos (InstructionFiles)"
    figures = Figures(name)
    world = ChaosWorld(root, workspaces=params.workspaces, seed=params.seed)
    rng = random.Random(params.seed)
    before = Resources.snapshot()
    started = anyio.current_time()
    state = {"kills_done": False}
    escalated: list[BaseException] = []

    async def traffic(files: InstructionFiles, h: Harness | None) -> None:
        async def loader(n: int) -> None:
            local = random.Random(params.seed * 1000 + n)
            count = 0
            while count < params.loads_per_loader or not state["kills_done"]:
                count += 1
                await one_load(files, h, local)

        async def killer() -> None:
            cache_killer = CacheKiller(files, rng)
            try:
                while figures.faults < params.kills:
                    await anyio.sleep(rng.expovariate(1 / params.kill_gap))
                    if cache_killer.kill():
                        figures.faults += 1
            finally:
                state["kills_done"] = True

        async def file_editor() -> None:
            for _ in range(params.file_edits):
                w = rng.randrange(params.workspaces)
                await world.edit_file(w, rng.randrange(len(FILES)))
                how = rng.random()
                if how < 0.45:
                    world.invalidate(files, workspace=w)
                elif how < 0.9:
                    world.invalidate(files, workspace=w, alias=True)
                else:
                    world.invalidate(files)
                await anyio.sleep(rng.uniform(0, 0.01))

        async def row_editor() -> None:
            rows = sorted(world.rows)
            for _ in range(params.row_edits):
                p, a = rows[rng.randrange(len(rows))]
                await world.edit_row(p, a)
                how = rng.random()
                if how < 0.4:
                    world.invalidate(files, project_id=p)
                elif how < 0.7:
                    world.invalidate(files, project_id=p, agent=a)
                elif how < 0.9:
                    world.invalidate(files, agent=a)
                else:
                    world.invalidate(files)
                await anyio.sleep(rng.uniform(0, 0.01))

        async def noise() -> None:
            # Invalidations that cover only part of the keys (the oracle knows exactly which).
            for _ in range(params.noise_invalidations):
                await anyio.sleep(rng.uniform(0, 0.02))
                world.invalidate(
                    files,
                    workspace=rng.randrange(params.workspaces),
                    alias=rng.random() < 0.5,
                    project_id=rng.choice(world.projects),
                )

        async with anyio.create_task_group() as group:
            for n in range(params.loaders):
                group.start_soon(loader, n)
            group.start_soon(killer)
            group.start_soon(file_editor)
            group.start_soon(row_editor)
            group.start_soon(noise)

    async def one_load(files: InstructionFiles, h: Harness | None, local: random.Random) -> None:
        key = world.keys[local.randrange(len(world.keys))]
        w, p, a = key
        via_prompt = h is not None and local.random() < params.build_prompt_rate
        if via_prompt:
            # build_prompt needs a roster slug; the hostile agent string is load-only.
            a = local.choice(("reviewer", "planner"))
            key = (w, p, a)
        path = (world.aliases if local.random() < 0.3 else world.workspaces)[w]
        cancel = local.random() < params.cancel_rate
        limit = local.uniform(0, 0.01) if cancel else params.hang_limit
        floor = dict(world.floor[key])  # the last covering invalidate before this load starts
        figures.operations += 1
        pairs: list[tuple[str, str]] = []
        try:
            with anyio.move_on_after(limit) as scope:
                if via_prompt:
                    assert h is not None
                    prompt = await h.build_prompt(path, agent=a, project_id=p)
                    layer = next(r for r in prompt.layers if r.name == "instruction_files")
                    pairs = [(html.unescape(src), body) for src, body in _BLOCK.findall(layer.text)]
                    if layer.dropped or layer.truncated:
                        figures.wrong_result(f"{key}: instruction layer trimmed: {layer.dropped}")
                        return
                else:
                    result = await files.load(path, agent=a, project_id=p)
                    if result.warnings:
                        figures.wrong_result(f"{key}: unexpected warnings {result.warnings}")
                        return
                    pairs = [(s.path, s.content) for s in result.sources]
        except TYPED_ERRORS:
            figures.typed_errors += 1
            return
        except Exception as exc:
            figures.wrong_result(f"{key}: {type(exc).__name__}: {exc}")
            return
        if scope.cancelled_caught:
            if cancel:
                figures.cancelled += 1
            else:
                figures.hang(f"load {key} took over {params.hang_limit}s")
            return
        problem = world.check(key, floor, pairs)
        if problem is not None:
            figures.wrong_result(problem)
        if any("DECOY" in content for _, content in pairs):
            figures.wrong_result(f"{key}: the shadowed AGENTS.md was loaded")

    with quiet_logs():
        try:
            if harness:
                config = HarnessConfig(instruction_files=InstructionFilesSettings(walk_threads=1))
                if max_restarts is not None:  # else the Harness's default intensity
                    config = _with_intensity(config, max_restarts)
                async with Harness(config, database=world.database) as h:
                    await traffic(h.instruction_files, h)
                    if not h.instruction_files.cache_running:
                        await _eventually(lambda: h.instruction_files.cache_running)
            else:
                files = InstructionFiles(
                    InstructionFilesSettings(walk_threads=1), database=world.database
                )
                restarts = max_restarts if max_restarts is not None else 100 * params.kills + 10
                async with Supervisor([files.child_spec()], max_restarts=restarts, max_seconds=1):
                    await traffic(files, None)
                    await _eventually(lambda: files.cache_running)
                    # The cache still works after the storm: a repeated load is a hit.
                    first = await files.load(world.workspaces[0], agent=world.agents[0])
                    again = await files.load(world.workspaces[0], agent=world.agents[0])
                    if first is not again:
                        figures.wrong_result("after the chaos a repeated load was not a cache hit")
        except MaxRestartsExceeded as exc:
            escalated.append(exc)
    figures.seconds = anyio.current_time() - started
    tasks, fds = await before.leaks()
    figures.leaked_tasks, figures.leaked_fds = len(tasks), len(fds)
    figures.problems.extend(f"leaked task {t}" for t in tasks[:5])
    figures.problems.extend(f"leaked fd {f}" for f in fds[:5])
    if escalated:
        figures.escalation = str(escalated[0])
    return figures


def _with_intensity(config: HarnessConfig, max_restarts: int) -> HarnessConfig:
    """``config`` with a Harness restart intensity of ``max_restarts`` in 5 s."""
    data = config.model_dump()
    data["supervisor"] = {"max_restarts": max_restarts, "max_seconds": 5.0}
    return HarnessConfig.model_validate(data)


async def _eventually(predicate: Callable[[], bool], limit: float = 10.0) -> None:
    """Poll until the supervisor has caught up (it exposes no event to wait on)."""
    with anyio.fail_after(limit):
        while not predicate():  # noqa: ASYNC110 - polling state owned by another task
            await anyio.sleep(0.002)


# ------------------------------------------------------------------------------------------
# Lifecycle: start/stop cycles, stops while starting or restarting


@dataclass
class LifecycleFigures(Figures):
    memory_growth_bytes: int = 0  # traced memory, second half of the cycles
    memory_per_cycle: float = 0.0


def small_world(root: Path) -> tuple[Path, Path]:
    """One workspace with a root file and one database row (project "p", agent "reviewer")."""
    ws = root / "ws"
    (ws / "pkg").mkdir(parents=True, exist_ok=True)
    (ws / "AGENTS.md").write_text("root policy\n", encoding="utf-8")
    (ws / "pkg" / "AGENTS.md").write_text("pkg policy\n", encoding="utf-8")
    database = root / "lifecycle.db"
    if not database.exists():
        create_schema(database)
        with contextlib.closing(sqlite3.connect(database)) as db:
            db.execute(
                "INSERT INTO agent_instructions (project_id, agent_slug, content) "
                "VALUES ('p', 'reviewer', 'row policy')"
            )
            db.commit()
    return ws, database


async def _checkpoints(n: int) -> None:
    for _ in range(n):
        await anyio.lowlevel.checkpoint()


async def _slow_child(gate: anyio.Event, task_status: Any) -> None:
    await gate.wait()  # never set: the stop always lands while this child is starting
    task_status.started()
    await anyio.sleep_forever()


LIFECYCLE_KINDS = (
    "clean",
    "cancel_during_start",
    "stop_while_restarting",
    "cancel_while_restarting",
    "error_in_body",
    "escalation",
    "stop_while_child_starting",
    "stop_while_child_restarting",
)


async def lifecycle_cycle(
    kind: str, ws: Path, database: Path, rng: random.Random, figures: Figures
) -> None:
    """One Harness (or bare Supervisor) start/stop cycle of the given kind; checks its result."""
    config = HarnessConfig(instruction_files=InstructionFilesSettings(walk_threads=1))
    figures.operations += 1
    try:
        with anyio.fail_after(10):
            await _one_cycle(kind, ws, database, rng, figures, config)
    except TimeoutError:
        figures.hang(f"lifecycle cycle {kind!r} did not finish in 10s")
    except Exception as exc:
        figures.wrong_result(f"{kind}: unexpected {type(exc).__name__}: {exc}")


async def _one_cycle(
    kind: str,
    ws: Path,
    database: Path,
    rng: random.Random,
    figures: Figures,
    config: HarnessConfig,
) -> None:
    if kind == "clean":
        async with Harness(config, database=database) as h:
            found = await h.instruction_files.load(ws, agent="reviewer", project_id="p")
            paths = [s.path for s in found]
            if paths != ["AGENTS.md", "pkg/AGENTS.md", "db:p/reviewer"]:
                figures.wrong_result(f"clean cycle loaded {paths}")
    elif kind == "cancel_during_start":
        # Cancel the host after 0..6 scheduler steps: sometimes before the supervisor has
        # started, sometimes while the cache child is starting, sometimes in the body.
        figures.faults += 1
        steps = rng.choice((0, 0, 0, 1, 2, 4))
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:

                async def cancel_soon() -> None:
                    await _checkpoints(steps)
                    scope.cancel()

                group.start_soon(cancel_soon)
                async with Harness(config, database=database):
                    await anyio.sleep_forever()
        if not scope.cancelled_caught:
            figures.wrong_result("cancel_during_start: the host's cancellation was swallowed")
    elif kind == "stop_while_restarting":
        async with Harness(config, database=database) as h:
            if CacheKiller(h.instruction_files, rng).kill():
                figures.faults += 1
            await _checkpoints(rng.randrange(4))
    elif kind == "cancel_while_restarting":
        with anyio.CancelScope() as scope:
            async with Harness(config, database=database) as h:
                if CacheKiller(h.instruction_files, rng).kill():
                    figures.faults += 1
                await _checkpoints(rng.randrange(4))
                scope.cancel()
                await anyio.sleep_forever()
        if not scope.cancelled_caught:
            figures.wrong_result("cancel_while_restarting: cancellation was swallowed")
    elif kind == "error_in_body":
        figures.faults += 1
        try:
            async with Harness(config, database=database) as h:
                h.instruction_files._crash_cache()
                raise LookupError("boom in the body")
        except LookupError:
            pass  # the body's own exception, bare (no ExceptionGroup)
        else:
            figures.wrong_result("error_in_body: the body's exception vanished")
    elif kind == "escalation":
        # More kills than the restart intensity (3 in 5 s): the tree must give up cleanly.
        try:
            async with Harness(_with_intensity(config, 3), database=database) as h:
                killer = CacheKiller(h.instruction_files, rng)
                for _ in range(4):
                    await _eventually(killer.can_kill)
                    if killer.kill():
                        figures.faults += 1
                await anyio.sleep_forever()
        except MaxRestartsExceeded:
            pass
        else:
            figures.wrong_result("escalation: MaxRestartsExceeded did not leave the async with")
    elif kind == "stop_while_child_starting":
        files = InstructionFiles(InstructionFilesSettings(walk_threads=1), database=database)
        gate = anyio.Event()
        spec = ChildSpec("slow", lambda status: _slow_child(gate, status), shutdown=0.5)
        figures.faults += 1
        with anyio.move_on_after(rng.uniform(0, 0.003)) as scope:
            async with Supervisor([files.child_spec(), spec]):
                pass  # never reached: "slow" never becomes ready
        if not scope.cancelled_caught:
            figures.wrong_result("stop_while_child_starting: the supervisor started anyway")
        if files.cache_running:
            figures.wrong_result("stop_while_child_starting: the cache child was left running")
    elif kind == "stop_while_child_restarting":
        files = InstructionFiles(InstructionFilesSettings(walk_threads=1), database=database)
        gate = anyio.Event()
        starts = {"n": 0}

        async def flaky(task_status: Any) -> None:
            starts["n"] += 1
            if starts["n"] > 1:
                await gate.wait()  # the restart hangs in its start: "restarting" forever
            task_status.started()
            await anyio.lowlevel.checkpoint()
            raise RuntimeError("crash once ready")

        async with Supervisor(
            [files.child_spec(), ChildSpec("flaky", flaky, shutdown=0.5)], max_restarts=5
        ) as sup:
            await _eventually(lambda: starts["n"] >= 2)
            figures.faults += 1
            statuses = {c.id: c.status for c in sup.which_children()}
            if statuses.get("flaky") != "restarting":
                figures.wrong_result(f"stop_while_child_restarting: statuses {statuses}")
        if files.cache_running:
            figures.wrong_result("stop_while_child_restarting: the cache child was left running")
    else:  # pragma: no cover - a typo in a test
        raise ValueError(kind)


async def run_lifecycle(
    root: Path,
    cycles: int,
    *,
    kinds: Sequence[str] = LIFECYCLE_KINDS,
    warmup: int = 24,
    seed: int = 7,
    trace_memory: bool = True,
) -> LifecycleFigures:
    """``cycles`` start/stop cycles over ``kinds`` in turn; tasks, fds and memory compared.

    Memory is traced memory (tracemalloc) after a warm-up, measured between the middle and
    the end of the run so one-time caches (imports, regexes, thread pools) do not count.
    """
    figures = LifecycleFigures("lifecycle")
    ws, database = small_world(root)
    rng = random.Random(seed)
    started = anyio.current_time()
    with quiet_logs():
        for i in range(warmup):
            await lifecycle_cycle(kinds[i % len(kinds)], ws, database, rng, Figures("warmup"))
        await anyio.sleep(0.05)
        before = Resources.snapshot()
        tracing = trace_memory and not tracemalloc.is_tracing()
        if tracing:
            tracemalloc.start()
        try:
            middle = 0
            for i in range(cycles):
                if i == cycles // 2:
                    gc.collect()
                    middle = tracemalloc.get_traced_memory()[0] if trace_memory else 0
                await lifecycle_cycle(kinds[i % len(kinds)], ws, database, rng, figures)
            gc.collect()
            if trace_memory:
                end = tracemalloc.get_traced_memory()[0]
                figures.memory_growth_bytes = end - middle
                figures.memory_per_cycle = figures.memory_growth_bytes / max(
                    cycles - cycles // 2, 1
                )
        finally:
            if tracing:
                tracemalloc.stop()
    figures.seconds = anyio.current_time() - started
    tasks, fds = await before.leaks()
    figures.leaked_tasks, figures.leaked_fds = len(tasks), len(fds)
    figures.problems.extend(f"leaked task {t}" for t in tasks[:5])
    figures.problems.extend(f"leaked fd {f}" for f in fds[:5])
    return figures


# ------------------------------------------------------------------------------------------
# Hooks under random behaviour, against a reference model


BEHAVIOURS = (
    "unchanged",
    "rewrite",
    "halt",
    "raise",
    "sleep_past",  # async, sleeps far past its timeout
    "sleep_within",  # async, finishes inside its timeout
    "sync_late",  # sync, returns (a rewrite) after its timeout: the result must be void
    "swallow_cancel",  # catches its timeout's cancellation and returns a rewrite anyway
    "raise_on_cancel",  # turns its timeout's cancellation into an error of its own
)
TIMED_OUT = ("sleep_past", "sync_late", "swallow_cancel", "raise_on_cancel")
MATCHERS: tuple[str | None, ...] = (None, "*", "Bash", "Edit", "Bash|Edit", "NotebookEdit")
TIMEOUT = 0.02


@dataclass(frozen=True)
class Step:
    behaviour: str
    is_async: bool
    match: str | None


def make_hook(index: int, step: Step, calls: list[int]) -> Callable[[Any], Any]:
    """A handler scripted to one behaviour; it logs each call so skipped ones are visible."""

    def act(payload: dict[str, Any]) -> Any:
        if step.behaviour in ("unchanged", "sleep_within", "sleep_past"):
            return None
        if step.behaviour == "rewrite":
            return {**payload, "trail": (*payload["trail"], index)}
        if step.behaviour == "halt":
            return Halt(f"halt by h{index}")
        raise KeyError(f"boom {index}")

    if step.behaviour == "sync_late":

        def late(payload: dict[str, Any]) -> Any:
            calls.append(index)
            import time

            time.sleep(TIMEOUT * 1.5)  # a sync handler cannot be preempted; its result is void
            return {**payload, "trail": (*payload["trail"], "late")}

        return late

    if not step.is_async and step.behaviour in ("unchanged", "rewrite", "halt", "raise"):

        def sync_handler(payload: dict[str, Any]) -> Any:
            calls.append(index)
            return act(payload)

        return sync_handler

    async def async_handler(payload: dict[str, Any]) -> Any:
        calls.append(index)
        if step.behaviour == "sleep_past":
            await anyio.sleep(60)  # far past its timeout: must be cut off and halt
        elif step.behaviour in ("swallow_cancel", "raise_on_cancel"):
            try:
                await anyio.sleep(60)
            except anyio.get_cancelled_exc_class():
                if step.behaviour == "raise_on_cancel":
                    raise RuntimeError("cancelled, and said so in my own words") from None
                return {**payload, "trail": (*payload["trail"], "swallowed")}
        elif step.behaviour == "sleep_within":
            await anyio.sleep(TIMEOUT / 20)
        else:
            await anyio.lowlevel.checkpoint()
        return act(payload)

    return async_handler


def hook_reference(
    steps: Sequence[Step], payload: dict[str, Any]
) -> tuple[bool, str | None, tuple[str, ...], dict[str, Any], type[BaseException] | None]:
    """The rules in ten lines: (halted, halted_by, ran, final payload, error type)."""
    ran: list[str] = []
    for index, step in enumerate(steps):
        if step.match not in (None, "*") and payload["tool_name"] not in step.match.split("|"):
            continue
        ran.append(f"h{index}")
        if step.behaviour == "halt":
            return True, f"h{index}", tuple(ran), payload, None
        if step.behaviour == "raise":
            return True, f"h{index}", tuple(ran), payload, KeyError
        if step.behaviour in TIMED_OUT:
            return True, f"h{index}", tuple(ran), payload, HookTimeoutError
        if step.behaviour == "rewrite":
            payload = {**payload, "trail": (*payload["trail"], index)}
    return False, None, tuple(ran), payload, None


def build_chain(steps: Sequence[Step], calls: list[int]) -> Hooks:
    hooks = Hooks()
    for index, step in enumerate(steps):
        timeout = TIMEOUT if step.behaviour in TIMED_OUT else None
        if step.behaviour == "sleep_within" or (timeout is None and step.is_async and index % 2):
            # The timeout path with a handler that finishes in time: a margin no loaded
            # machine's scheduling delay reaches (a wake-up late by TIMEOUT made it flaky).
            timeout = 5.0
        hooks = hooks.register(
            "pre_tool_use",
            make_hook(index, step, calls),
            name=f"h{index}",
            match=step.match,
            timeout=timeout,
        )
    return hooks


def check_chain(
    steps: Sequence[Step], tool: str, outcome: HookOutcome, calls: list[int]
) -> str | None:
    """None if ``outcome`` equals the reference model and no handler ran after a failure."""
    payload = {"tool_name": tool, "trail": ()}
    halted, halted_by, ran, final, error = hook_reference(steps, payload)
    got = (outcome.halted, outcome.halted_by, outcome.ran)
    if got != (halted, halted_by, ran):
        return f"steps={steps} tool={tool}: got {got}, model says {(halted, halted_by, ran)}"
    if outcome.payload != final:
        return f"steps={steps}: payload {outcome.payload}, model says {final}"
    if [f"h{i}" for i in calls] != list(ran):
        return f"steps={steps}: handlers called {calls}, but ran={ran}"
    if error is None:
        if outcome.error is not None:
            return f"steps={steps}: error {outcome.error!r} where none was expected"
    elif not isinstance(outcome.error, error):
        return f"steps={steps}: error {outcome.error!r}, expected a {error.__name__}"
    if halted:
        if not outcome.reason or (error is not None and str(halted_by) not in outcome.reason):
            return f"steps={steps}: halt reason {outcome.reason!r} does not name {halted_by}"
    elif outcome.reason is not None:
        return f"steps={steps}: reason {outcome.reason!r} on a run that did not halt"
    return None


async def run_hook_chains(chains: int, seed: int = 3, max_len: int = 8) -> Figures:
    """Random chains of scripted handlers (benchmark scale); compared with ``hook_reference``."""
    figures = Figures("hooks (random behaviour)")
    rng = random.Random(seed)
    before = Resources.snapshot()
    started = anyio.current_time()
    for _ in range(chains):
        steps = [
            Step(rng.choice(BEHAVIOURS), rng.random() < 0.5, rng.choice(MATCHERS))
            for _ in range(rng.randrange(max_len + 1))
        ]
        tool = rng.choice(("Bash", "Edit", "Read"))
        calls: list[int] = []
        hooks = build_chain(steps, calls)
        figures.operations += 1
        figures.faults += sum(s.behaviour in ("raise", *TIMED_OUT) for s in steps)
        try:
            with anyio.fail_after(10):
                outcome = await hooks.run("pre_tool_use", {"tool_name": tool, "trail": ()})
        except TimeoutError:
            figures.hang(f"chain {steps}")
            continue
        problem = check_chain(steps, tool, outcome, calls)
        if problem is not None:
            figures.wrong_result(problem)
    figures.seconds = anyio.current_time() - started
    tasks, fds = await before.leaks()
    figures.leaked_tasks, figures.leaked_fds = len(tasks), len(fds)
    return figures


# ------------------------------------------------------------------------------------------
# Database faults


GOOD_ROW = "the reviewer's row for acme"
DB_FAULTS: tuple[str, ...] = (
    "missing",
    "directory",
    "empty_file",
    "garbage",
    "bad_header",
    "truncated",
    "locked",
    "wal_locked",
    "table_missing",
    "extra_column",
    "missing_updated_at",
    "missing_content",
    "blob_content",
    "null_content",
)
# What each fault must produce: "error" (a typed InstructionStoreError), "row" (the right row),
# "row_or_error" (either; a truncated file may still hold the page that is read), or
# "no_row" (no database source, with a warning).
DB_EXPECT: dict[str, str] = {
    "missing": "error",
    "directory": "error",
    "empty_file": "error",
    "garbage": "error",
    "bad_header": "error",
    "truncated": "row_or_error",
    "locked": "error",
    "wal_locked": "row",
    "table_missing": "error",
    "extra_column": "row",
    "missing_updated_at": "error",
    "missing_content": "error",
    "blob_content": "row",
    "null_content": "no_row",
}


def _good_db(path: Path, *, wal: bool = False, filler_rows: int = 0) -> None:
    create_schema(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        if wal:
            db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES (?, ?, ?)",
            ("acme", "reviewer", GOOD_ROW),
        )
        db.executemany(
            "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES (?, ?, ?)",
            [(f"filler{n}", "reviewer", "x" * 500) for n in range(filler_rows)],
        )
        db.commit()


def _custom_table(path: Path, columns: str, values: tuple[object, ...]) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(f"CREATE TABLE agent_instructions ({columns})")
        marks = ", ".join("?" * len(values))
        db.execute(f"INSERT INTO agent_instructions VALUES ({marks})", values)
        db.commit()


@contextlib.contextmanager
def fault_database(kind: str, directory: Path) -> Iterator[Path]:
    """A database path exhibiting ``kind``; a lock, if any, is held for the ``with`` body."""
    path = directory / f"{kind}.db"
    holder: sqlite3.Connection | None = None
    if kind == "missing":
        pass
    elif kind == "directory":
        path.mkdir()
    elif kind == "empty_file":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(random.Random(5).randbytes(8192))
    elif kind == "bad_header":
        _good_db(path)
        with path.open("r+b") as handle:
            handle.write(b"NOT A DATABASE!!")
    elif kind == "truncated":
        _good_db(path, filler_rows=64)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind in ("locked", "wal_locked"):
        _good_db(path, wal=kind == "wal_locked")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute(
            "UPDATE agent_instructions SET content = 'UNCOMMITTED' WHERE project_id = 'acme'"
        )
    elif kind == "table_missing":
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE something_else (x TEXT)")
            db.commit()
    elif kind == "extra_column":
        _custom_table(
            path,
            "project_id TEXT, agent_slug TEXT, content TEXT, updated_at TEXT, owner TEXT",
            ("acme", "reviewer", GOOD_ROW, "2026-01-01", "someone"),
        )
    elif kind == "missing_updated_at":
        _custom_table(
            path, "project_id TEXT, agent_slug TEXT, content TEXT", ("acme", "reviewer", GOOD_ROW)
        )
    elif kind == "missing_content":
        _custom_table(
            path,
            "project_id TEXT, agent_slug TEXT, body TEXT, updated_at TEXT",
            ("acme", "reviewer", GOOD_ROW, "2026-01-01"),
        )
    elif kind == "blob_content":
        _custom_table(
            path,
            "project_id TEXT, agent_slug TEXT, content BLOB, updated_at TEXT",
            ("acme", "reviewer", GOOD_ROW.encode() + b"\xff", "2026-01-01"),
        )
    elif kind == "null_content":
        _custom_table(
            path,
            "project_id TEXT, agent_slug TEXT, content TEXT, updated_at TEXT",
            ("acme", "reviewer", None, "2026-01-01"),
        )
    else:  # pragma: no cover - a typo in a test
        raise ValueError(kind)
    try:
        yield path
    finally:
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()


def check_db_outcome(kind: str, outcome: object) -> str | None:
    """None if ``outcome`` (an InstructionSet or the exception raised) is right for ``kind``."""
    expect = DB_EXPECT[kind]
    if isinstance(outcome, BaseException):
        if isinstance(outcome, InstructionStoreError) and expect in ("error", "row_or_error"):
            if "instructions database" not in str(outcome):
                return f"{kind}: the error does not say which database: {outcome}"
            return None
        return f"{kind}: raised {type(outcome).__name__}: {outcome} (expected {expect})"
    rows = [s for s in getattr(outcome, "sources", ()) if s.kind == "database"]
    warnings = getattr(outcome, "warnings", ())
    if expect == "error":
        return f"{kind}: returned {rows!r} instead of raising InstructionStoreError"
    if expect == "no_row":
        if rows or not any(w.startswith("db:acme/reviewer:") for w in warnings):
            return f"{kind}: expected no row and a warning, got {rows!r} {warnings!r}"
        return None
    if len(rows) != 1 or rows[0].path != "db:acme/reviewer":
        return f"{kind}: expected the acme/reviewer row, got {rows!r}"
    content = rows[0].content
    if kind == "blob_content":
        if content != GOOD_ROW + "\ufffd" or not warnings:
            return f"{kind}: invalid bytes not replaced and reported: {content!r} {warnings!r}"
    elif content != GOOD_ROW:
        return f"{kind}: wrong row content {content!r}"
    return None


async def run_db_faults(root: Path, rounds: int) -> Figures:
    """Every fault kind, ``rounds`` times each, through one running Harness."""
    figures = Figures("database faults")
    ws, _ = small_world(root)
    config = HarnessConfig(
        instruction_files=InstructionFilesSettings(database_timeout=0.05, walk_threads=1)
    )
    before = Resources.snapshot()
    started = anyio.current_time()
    with quiet_logs():
        for n in range(rounds):
            directory = root / f"faults{n}"
            directory.mkdir()
            for kind in DB_FAULTS:
                with fault_database(kind, directory) as path:
                    async with Harness(config, database=path) as h:
                        figures.operations += 1
                        figures.faults += 1
                        outcome: object
                        try:
                            with anyio.fail_after(10):
                                outcome = await h.instruction_files.load(
                                    ws, agent="reviewer", project_id="acme"
                                )
                        except TimeoutError:
                            figures.hang(f"database fault {kind}")
                            continue
                        except Exception as exc:
                            outcome = exc
                        if isinstance(outcome, InstructionStoreError):
                            figures.typed_errors += 1
                        problem = check_db_outcome(kind, outcome)
                        if problem is not None:
                            figures.wrong_result(problem)
                        child = h.supervisor.which_children()[0]
                        if child.status != "running" or child.restarts:
                            figures.wrong_result(f"{kind}: the cache child was disturbed: {child}")
    figures.seconds = anyio.current_time() - started
    tasks, fds = await before.leaks()
    figures.leaked_tasks, figures.leaked_fds = len(tasks), len(fds)
    figures.problems.extend(f"leaked fd {f}" for f in fds[:5])
    return figures
