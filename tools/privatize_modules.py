"""Make harness's implementation modules private: ``walk.py`` becomes ``_walk.py``.

A package's ``__init__`` is its API; a module users are told to import (named in the public
contract or in ``docs/`` / ``README.md`` as an import path, or listed in ``ALWAYS_PUBLIC``)
stays as it is. Every other module under ``harness/`` is renamed with ``git mv`` and every
reference to it is rewritten::

    python tools/privatize_modules.py --dry-run     # print the rename map, change nothing
    python tools/privatize_modules.py               # rename, rewrite, then ruff --fix/format

What is rewritten, in ``harness/``, ``tests/``, ``benchmarks/``, ``examples/``, ``docs/``,
``tools/`` and the top-level ``README.md``, ``SECURITY.md``, ``pyproject.toml`` and ``.ci/``:

- Python: import statements (``import harness.a.b``, ``from harness.a.b import N``,
  ``from harness.a import b`` -> ``from harness.a import _b as b``, ``from .b import N``),
  dotted paths inside strings and comments (lazy-export tables, ``monkeypatch.setattr``
  targets, logger names), and ``harness.a.b.N`` in code only where the file does
  ``import harness.a.b`` (elsewhere ``harness.build(...)`` is a method of a variable).
- Other text: dotted paths (not followed by ``(``) and file paths ``harness/a/b.py``.

Idempotent: a module already private is skipped, so a second run renames nothing. It prints a
summary: modules kept public (and why), renames, files rewritten.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "harness"
DEFAULT_CONTRACT = Path("/work/shared/CONTRACT.md")

# Import paths users are told about even where no document spells them as an import.
ALWAYS_PUBLIC = frozenset(
    {
        "harness.__main__",  # python -m harness
        "harness.cli",  # the console script harness.cli:main
        "harness.debug",  # harness.debug.print / aprint
        "harness.config",
        "harness.errors",
    }
)
REWRITE_DIRS = ("harness", "tests", "benchmarks", "examples", "docs", "tools", ".ci")
REWRITE_FILES = ("README.md", "SECURITY.md", "pyproject.toml")
TEXT_SUFFIXES = frozenset({".py", ".pyi", ".md", ".toml", ".txt", ".cfg", ".ini", ".sh", ""})
DOTTED = r"harness(?:\.[A-Za-z_]\w*)+"
PLUGIN_LOAD = re.compile(r"import_module\(\s*f[\"']\{__name__\}\.")
IMPORT_LINE = re.compile(rf"(?:^|\n)\s*(?:from\s+({DOTTED}|harness)\s+import|import\s+({DOTTED}))")


@dataclass
class Plan:
    modules: dict[str, Path]  # dotted name -> file, every non-__init__ module
    public: dict[str, str] = field(default_factory=dict)  # dotted name -> why it stays
    renames: dict[str, str] = field(default_factory=dict)  # old dotted -> new dotted
    skipped: dict[str, str] = field(default_factory=dict)  # dotted -> why not renamed
    bound: set[str] = field(default_factory=set)  # renamed modules whose package binds the name


def all_modules(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] != "__init__":
            found[".".join(parts)] = path
    return found


def _bound_in_package(root: Path, package: str, name: str) -> bool:
    """Whether ``package``'s ``__init__`` itself provides ``name`` (then ``from package import
    name`` is that object, not the submodule)."""
    init = root / Path(*package.split(".")) / "__init__.py"
    if not init.exists():
        return False
    source = init.read_text(encoding="utf-8")
    if re.search(rf"[\"']{re.escape(name)}[\"']", source):  # __all__ or a lazy-export table
        return True
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
    return False


def _documents(root: Path, contract: Path | None) -> Iterable[tuple[str, str]]:
    if contract is not None and contract.exists():
        yield "the contract", contract.read_text(encoding="utf-8")
    for path in sorted([*(root / "docs").rglob("*.md"), root / "README.md"]):
        if path.exists():
            yield str(path.relative_to(root)), path.read_text(encoding="utf-8")


def public_modules(root: Path, modules: dict[str, Path], contract: Path | None) -> dict[str, str]:
    public = {name: "always public" for name in ALWAYS_PUBLIC if name in modules}
    for name in modules:  # a plugin directory: its package imports its modules by computed name
        package = name.rsplit(".", 1)[0]
        init = root / Path(*package.split(".")) / "__init__.py"
        if init.exists() and PLUGIN_LOAD.search(init.read_text(encoding="utf-8")):
            public.setdefault(name, "loaded by name by its package")
    for where, text in _documents(root, contract):
        if where == "the contract":  # every dotted module path it names
            for match in re.finditer(DOTTED, text):
                _mark_prefixes(match.group(), modules, public, where)
            continue
        for match in IMPORT_LINE.finditer(text):
            dotted = match.group(1) or match.group(2)
            _mark_prefixes(dotted, modules, public, f"imported in {where}")
            if match.group(1):  # from P import a, b: a submodule imported as a module
                names = text[match.end() : match.end() + 400].split("\n", 1)[0]
                for name in re.findall(r"[A-Za-z_]\w*", names.replace(" as ", " ")):
                    candidate = f"{dotted}.{name}"
                    if candidate in modules and not _bound_in_package(root, dotted, name):
                        public.setdefault(candidate, f"imported in {where}")
        for match in re.finditer(rf"python -m ({DOTTED})", text):
            _mark_prefixes(match.group(1), modules, public, f"run in {where}")
    return public


def _mark_prefixes(dotted: str, modules: dict[str, Path], public: dict[str, str], why: str) -> None:
    parts = dotted.split(".")
    for end in range(2, len(parts) + 1):
        name = ".".join(parts[:end])
        if name in modules:
            public.setdefault(name, why)


def plan(root: Path, contract: Path | None) -> Plan:
    modules = all_modules(root)
    result = Plan(modules, public_modules(root, modules, contract))
    for name, path in modules.items():
        last = name.rsplit(".", 1)[1]
        if last.startswith("_") or name in result.public:
            continue
        target = path.with_name(f"_{last}.py")
        if target.exists():
            result.skipped[name] = f"{target.relative_to(root)} exists already"
            continue
        result.renames[name] = f"{name.rsplit('.', 1)[0]}._{last}"
        if _bound_in_package(root, name.rsplit(".", 1)[0], last):
            result.bound.add(name)
    return result


# ---- rewriting ---------------------------------------------------------------------------


@dataclass
class Rewriter:
    renames: dict[str, str]  # old dotted -> new dotted
    bound: set[str] = field(default_factory=set)  # ``from P import b`` means P's own b

    def __post_init__(self) -> None:
        olds = sorted(self.renames, key=len, reverse=True)
        alternatives = "|".join(re.escape(old) for old in olds) or "(?!)"
        self.dotted = re.compile(rf"(?<![\w.])({alternatives})(?![\w])")
        self.dotted_not_call = re.compile(rf"(?<![\w.])({alternatives})(?![\w(])")
        paths = "|".join(re.escape(old.replace(".", "/")) for old in olds) or "(?!)"
        self.path = re.compile(rf"(?<![\w])({paths})\.py\b")
        # package -> {submodule: private name}
        self.children: dict[str, dict[str, str]] = {}
        for old, new in self.renames.items():
            if old in self.bound:
                continue
            package, last = old.rsplit(".", 1)
            self.children.setdefault(package, {})[last] = new.rsplit(".", 1)[1]

    def _dotted(self, text: str, *, calls: bool) -> str:
        pattern = self.dotted if calls else self.dotted_not_call
        return pattern.sub(lambda m: self.renames[m.group(1)], text)

    def _path(self, text: str) -> str:
        def new_path(match: re.Match[str]) -> str:
            return self.renames[match.group(1).replace("/", ".")].replace(".", "/") + ".py"

        return self.path.sub(new_path, text)

    def text(self, source: str) -> str:
        return self._from_imports(self._path(self._dotted(source, calls=False)), None)

    def _from_imports(self, text: str, package_of_file: str | None) -> str:
        """``from P import b`` -> ``from P import _b as b``; ``from .b import`` -> ``._b``."""

        def from_package(match: re.Match[str]) -> str:
            package, names = match.group(1), match.group(2)
            if package == ".":
                package = package_of_file or ""
            children = self.children.get(package, {})
            if not children:
                return match.group()

            def one(name: re.Match[str]) -> str:
                old, alias = name.group(1), name.group(2)
                if old not in children:
                    return name.group()
                return f"{children[old]} as {alias or old}"

            names = re.sub(r"\b([A-Za-z_]\w*)\b(?:\s+as\s+([A-Za-z_]\w*))?", one, names)
            return f"from {match.group(1)} import {names}"

        text = re.sub(
            rf"from\s+({DOTTED}|harness|\.)\s+import\s+(\([^)]*\)|[^\n#]*)", from_package, text
        )
        if package_of_file is not None:
            children = self.children.get(package_of_file, {})

            def relative(match: re.Match[str]) -> str:
                name = match.group(1)
                return f"from .{children[name]}" if name in children else match.group()

            text = re.sub(r"from\s+\.([A-Za-z_]\w*)(?![\w.])", relative, text)
        return text

    def python(self, source: str, package_of_file: str | None) -> str:
        imported = set(re.findall(rf"^\s*import\s+({DOTTED})", source, re.M))
        code_names = {old for old in self.renames if old in imported}
        lines = source.splitlines(keepends=True)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))

        def at(position: tuple[int, int]) -> int:
            return offsets[position[0] - 1] + position[1]

        edits: list[tuple[int, int, str]] = []
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        start: int | None = None  # start of the current logical line's first token
        in_import = False
        for token in tokens:
            if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL):
                continue
            if token.type == tokenize.COMMENT:  # a comment never starts a logical line
                if not in_import:
                    new = self._path(self._dotted(token.string, calls=False))
                    if new != token.string:
                        edits.append((at(token.start), at(token.end), new))
                continue
            if start is None:
                start = at(token.start)
                in_import = token.type == tokenize.NAME and token.string in ("import", "from")
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if in_import:
                    end = at(token.start)
                    piece = source[start:end]
                    new = self._from_imports(self._dotted(piece, calls=True), package_of_file)
                    if new != piece:
                        edits.append((start, end, new))
                start, in_import = None, False
                continue
            if in_import:
                continue
            if token.type == tokenize.STRING:
                new = self._path(self._dotted(token.string, calls=False))
                if new != token.string:
                    edits.append((at(token.start), at(token.end), new))
            elif token.type == tokenize.NAME and token.string == PACKAGE and code_names:
                rest = source[at(token.start) :]
                match = self.dotted.match(rest)
                if match and match.group(1) in code_names:
                    begin = at(token.start)
                    edits.append((begin, begin + len(match.group(1)), self.renames[match.group(1)]))
        return _apply(source, edits)


def _apply(source: str, edits: list[tuple[int, int, str]]) -> str:
    for begin, end, new in sorted(edits, reverse=True):
        source = source[:begin] + new + source[end:]
    return source


def files_to_rewrite(root: Path) -> list[Path]:
    found: list[Path] = []
    for directory in REWRITE_DIRS:
        base = root / directory
        if base.is_dir():
            found += [p for p in base.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES]
    found += [root / name for name in REWRITE_FILES if (root / name).is_file()]
    skip = {Path(__file__).resolve()}
    return sorted(p for p in found if p.resolve() not in skip and "__pycache__" not in p.parts)


def package_of(root: Path, path: Path) -> str | None:
    relative = path.relative_to(root)
    if relative.parts[0] != PACKAGE:
        return None
    return ".".join(relative.parent.parts)


def rewrite(root: Path, rewriter: Rewriter) -> list[Path]:
    changed: list[Path] = []
    for path in files_to_rewrite(root):
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path.suffix in (".py", ".pyi"):
            try:
                new = rewriter.python(source, package_of(root, path))
            except (tokenize.TokenError, SyntaxError):
                new = rewriter.text(source)
        else:
            new = rewriter.text(source)
        if new != source:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def git_mv(root: Path, plan_: Plan) -> None:
    for old in plan_.renames:
        source = plan_.modules[old]
        target = source.with_name(f"_{source.name}")
        subprocess.run(["git", "mv", str(source), str(target)], cwd=root, check=True)


def tidy(root: Path, changed: list[Path]) -> None:
    """Import order changes with the underscore: let ruff sort and format what changed."""
    python = [str(p) for p in changed if p.suffix in (".py", ".pyi") and p.exists()]
    if not python:
        return
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--fix", "--select", "I", "--quiet", *python], cwd=root)
    subprocess.run([*ruff, "format", "--quiet", *python], cwd=root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this)")
    parser.add_argument("--contract", type=Path, default=DEFAULT_CONTRACT)
    parser.add_argument("--dry-run", action="store_true", help="print the map, change nothing")
    parser.add_argument("--no-tidy", action="store_true", help="skip ruff --fix / format")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    result = plan(root, args.contract if args.contract.exists() else None)
    print(
        f"{len(result.modules)} modules: {len(result.public)} public, "
        f"{len(result.renames)} to rename, {len(result.skipped)} skipped"
    )
    for name, why in sorted(result.public.items()):
        print(f"  public   {name}  ({why})")
    for name, why in sorted(result.skipped.items()):
        print(f"  skipped  {name}  ({why})")
    for old, new in sorted(result.renames.items()):
        print(f"  rename   {old} -> {new}")
    if args.dry_run or not result.renames:
        print("nothing changed" if not result.renames else "dry run: nothing changed")
        return 0
    git_mv(root, result)
    changed = rewrite(root, Rewriter(result.renames, result.bound))
    if not args.no_tidy:
        tidy(root, changed)
    print(f"renamed {len(result.renames)} modules; rewrote {len(changed)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
