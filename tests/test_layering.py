"""One-way imports: no cycle between modules of ``harness``, and no import against the layers.

Every import statement counts, wherever it is: at module level, inside a function (a deferred
import) or under ``if TYPE_CHECKING:``. A deferred import hides a cycle from the interpreter,
not from the design. ``from P import N`` reads package ``P`` (its ``__init__`` runs and must
already hold ``N``), so it is an import of ``P``, and of ``P.N`` too when that is a module;
``import P.Q`` and ``from P.Q import N`` are imports of ``P.Q`` alone.

The layers, lowest first. A module may import its own layer and the layers below, never one
above (the first matching prefix decides a module's layer):

 0. ``harness._version``, ``harness.errors``, ``harness._closing``: what everything may use.
 1. ``harness._encodings``, ``harness._tokenizer``: pure text and token arithmetic.
 2. ``harness.runtime``, ``harness.hooks``, ``harness.prompt_assembler``, ``harness._agents``:
    the supervision runtime, tool-use hooks, the pure assembler, the roster.
 3. ``harness.stores``: the store seam (locations, the backend registry, driver helpers);
    ``harness.context_requests``: readiness and permissions over units, pure.
 4. ``harness.workspace``, ``harness._unit_files``, ``harness._project_root``: reading a
    workspace safely, and finding the project it belongs to.
 5. ``harness.instruction_files``: instruction files and their stores.
 6. ``harness._project_context``, ``harness.manifests``, ``harness.tools``, ``harness.skills``:
    what a build adds and records; ``harness.cases``: recorded builds as regression cases.
 7. ``harness.config``: the configuration, which names settings of every part below.
 8. ``harness.build``, ``harness._harness``: one build's keywords and result, and the facade
    that wires the parts into one supervised tree.
 9. ``harness.debug``, ``harness.cli``, ``harness.__main__``, ``harness`` (the package's own
    ``__init__``): what users call.

A module of ``harness`` that no prefix names fails the test: place it in the table (and here).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "harness"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("harness._version", "harness.errors", "harness._closing"),
    ("harness._encodings", "harness._tokenizer"),
    ("harness.runtime", "harness.hooks", "harness.prompt_assembler", "harness._agents"),
    ("harness.stores", "harness.context_requests"),
    ("harness.workspace", "harness._unit_files", "harness._project_root"),
    ("harness.instruction_files",),
    (
        "harness._project_context",
        "harness.manifests",
        "harness.tools",
        "harness.skills",
        "harness.cases",
    ),
    ("harness.config",),
    ("harness.build", "harness._harness"),
    ("harness.debug", "harness.cli", "harness.__main__", "harness"),
)


@dataclass(frozen=True)
class Import:
    """One import of ``target`` by ``source``, at ``file:line``."""

    source: str
    target: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.source} imports {self.target}"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    where = str(path.relative_to(PACKAGE.parent)) if path.is_relative_to(PACKAGE) else str(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, where, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            yield Import(module, name, where, node.lineno)
            for alias in node.names:
                if f"{name}.{alias.name}" in modules:
                    yield Import(module, f"{name}.{alias.name}", where, node.lineno)


def _graph() -> tuple[dict[str, Path], list[Import]]:
    modules = _modules()
    edges = [
        found
        for module, path in modules.items()
        for found in _imports(module, path, modules)
        if found.target in modules and found.target != module
    ]
    return modules, edges


def layer_of(module: str) -> int | None:
    """The layer of ``module``: its longest matching prefix in ``LAYERS``."""
    best: tuple[int, int] | None = None
    for number, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(f"{prefix}.")
            if matches and (best is None or len(prefix) > best[1]):
                best = (number, len(prefix))
    return None if best is None else best[0]


def _cycles(modules: dict[str, Path], edges: list[Import]) -> list[list[Import]]:
    """One cycle (as its imports) per strongly connected group of modules (Tarjan)."""
    out: dict[str, list[Import]] = {module: [] for module in modules}
    for edge in edges:
        out[edge.source].append(edge)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for edge in out[node]:
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for module in modules:
        if module not in index:
            visit(module)
    return [_one_cycle(sorted(group)[0], group, out) for group in groups]


def _one_cycle(start: str, group: set[str], out: dict[str, list[Import]]) -> list[Import]:
    """The shortest cycle through ``start`` inside ``group`` (breadth first)."""
    paths: dict[str, list[Import]] = {start: []}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in out[node]:
                if edge.target not in group:
                    continue
                if edge.target == start:
                    return [*paths[node], edge]
                if edge.target not in paths:
                    paths[edge.target] = [*paths[node], edge]
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def test_every_module_has_a_layer() -> None:
    unplaced = [module for module in _modules() if layer_of(module) is None]
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"


def test_no_import_goes_up_a_layer() -> None:
    _, edges = _graph()
    upward = []
    for edge in edges:
        source, target = layer_of(edge.source), layer_of(edge.target)
        if source is not None and target is not None and target > source:
            upward.append(f"{edge}  (layer {target} is above layer {source})")
    assert not upward, "imports against the layer order:\n" + "\n".join(sorted(upward))


def test_no_cycle_between_modules() -> None:
    modules, edges = _graph()
    cycles = _cycles(modules, edges)
    described = [
        " -> ".join([cycle[0].source, *(edge.target for edge in cycle)])
        + "".join(f"\n    {edge}" for edge in cycle)
        for cycle in cycles
    ]
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(described)


def test_the_checker_sees_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    """The checker itself: a function-level and a TYPE_CHECKING import are imports."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from harness.config import HarnessConfig\n"
        "def f():\n    from harness import cli\n",
        encoding="utf-8",
    )
    modules = {"harness.config": source, "harness": source, "harness.cli": source}
    found = {edge.target for edge in _imports("harness.probe", source, modules)}
    assert {"harness.config", "harness", "harness.cli"} <= found
