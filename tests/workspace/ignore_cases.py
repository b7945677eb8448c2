"""Random ignore-rule cases and the two views compared on them: git's and ours.

One *batch* is a real git repository holding many *cases*, each in its own directory
``cN/`` with its own tree, root ``.gitignore`` (its patterns are anchored there) and nested
``.gitignore`` files; a batch sometimes has a ``.git/info/exclude`` and some files added with
``git add -f``. Every path of the repository is then classified by one
``git check-ignore --no-index --stdin -z -v -n`` call (tracked paths and the directories
holding them are then not ignored, as ``check-ignore`` with the index reports them),
and by ``harness.workspace._ignore`` walking the tree as the discovery walk does.
Used by ``tests/workspace/test_ignore_differential.py`` (fixed seeds) and
``benchmarks/ignore_differential.py`` (the large run).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.workspace._ignore import IgnoreChain, IgnoreFile, workspace_rules

GIT = shutil.which("git")

NAMES = (
    "a", "b", "ab", "abc", "build", "dist", "x.log", "y.txt", "keep", "AGENTS.md",
    ".env", ".env.local", "foo", "foobar", "bar", "data", "é", "日本", "naïve.md",
    "sp ace", "tail ", "t\tab", "br[a]ck", "st*r", "q?m", "back\\slash", "!bang", "#hash",
    "a]b", "UP", "9lives", "-dash", "x.y.z", "aaaaaaaa",
)  # fmt: skip
ELEMENTS = (
    "*", "**", "***", "?", "??", "[a-c]", "[!a]", "[^x]", "[[:alpha:]]", "[[:digit:]]",
    "[[:space:]]", "[[:punct:]]", "[[:upper:]]", "[[:bogus:]]", "[]a]", "[\\]]", "[a-]",
    "[/]", "[!/]", "[!]", "[", "\\*", "\\ ", "\\]", "\\\\", "\\?", "é", "[é]", "[\xe9]",
    "/", "//", "**/", "/**", "/**/", "**/**/", ".", "-", " ", "\t", "[[:alpha:]-z]",
    "[a-c-e]", "[\\a-\\c]", "[[:]]", "[[]", "\\",
)  # fmt: skip


@dataclass
class Batch:
    root: Path
    cases: int


def _name(rng: random.Random) -> str:
    if rng.random() < 0.8:
        return rng.choice(NAMES)
    return "".join(rng.choice("abxyz.é*[] ") for _ in range(rng.randint(1, 4))).strip("/")


def _pattern(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        parts.append(rng.choice(ELEMENTS) if rng.random() < 0.55 else _name(rng))
    body = "".join(parts)
    roll = rng.random()
    if roll < 0.2:
        body = "!" + body
    elif roll < 0.3:
        body = "/" + body
    elif roll < 0.33:
        body = rng.choice(("\\!", "\\#", "#", "!/")) + body
    roll = rng.random()
    if roll < 0.2:
        body += "/"
    elif roll < 0.3:
        body += rng.choice((" ", "  ", "\t", "\\ ", " \\ ", "/ ", "\\", "\r"))
    return body


def _lines(rng: random.Random, count: int) -> bytes:
    lines = [_pattern(rng) for _ in range(count)]
    if rng.random() < 0.1:
        lines.insert(0, "\ufeff" + lines.pop(0) if lines else "\ufeff")
    text = ("\r\n" if rng.random() < 0.1 else "\n").join(lines)
    if rng.random() < 0.8:
        text += "\n"
    return text.encode("utf-8")


def _tree(rng: random.Random, base: Path) -> list[Path]:
    """Directories and files under ``base``; returns the directories (base first)."""
    dirs = [base]
    base.mkdir(parents=True)
    for _ in range(rng.randint(2, 7)):
        parent = rng.choice(dirs)
        if len(parent.relative_to(base).parts) >= 3:
            continue
        child = parent / _name(rng)
        if child.exists():
            continue
        child.mkdir()
        dirs.append(child)
    for directory in dirs:
        for _ in range(rng.randint(0, 3)):
            path = directory / _name(rng)
            if not path.exists():
                path.write_text("x\n")
        agents = directory / "AGENTS.md"
        if rng.random() < 0.6 and not agents.exists():
            agents.write_text("a\n")
    return dirs


def _env(root: Path) -> dict[str, str]:
    """No user or system configuration (so no core.excludesFile)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / ".no-config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    }


def git(root: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    assert GIT is not None
    done = subprocess.run(
        [GIT, "-c", "core.excludesFile=", "-c", "core.quotePath=false", *args],
        cwd=root, input=stdin, capture_output=True, check=False, env=_env(root),
    )  # fmt: skip
    if done.returncode != 0 and (check or done.returncode != 1):
        raise AssertionError(done.stderr.decode(errors="replace"))
    return done.stdout


def make_batch(rng: random.Random, root: Path, cases: int) -> Batch:
    """A git repository at ``root`` holding ``cases`` random cases."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for index in range(cases):
        dirs = _tree(rng, root / f"c{index}")
        (dirs[0] / ".gitignore").write_bytes(_lines(rng, rng.randint(1, 5)))
        for directory in rng.sample(dirs[1:], min(len(dirs) - 1, rng.randint(0, 2))):
            (directory / ".gitignore").write_bytes(_lines(rng, rng.randint(1, 3)))
    if rng.random() < 0.4:
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_bytes(_lines(rng, rng.randint(1, 4)))
    return Batch(root, cases)


def track_some(rng: random.Random, root: Path) -> None:
    """``git add -f`` a few files, instruction files (deep ones, often ignored) preferred."""
    files = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts]
    agents = [p for p in files if p.name.startswith("AGENTS") and p.parent != root]
    pool = agents if agents and rng.random() < 0.7 else files
    if pool and rng.random() < 0.6:
        chosen = rng.sample(pool, min(len(pool), rng.randint(1, 8)))
        rels = b"\0".join(os.fsencode(p.relative_to(root).as_posix()) for p in chosen)
        git(root, "--literal-pathspecs", "add", "-f", "--pathspec-from-file=-",
            "--pathspec-file-nul", stdin=rels)  # fmt: skip


def all_paths(root: Path) -> list[str]:
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/") or rel.startswith(".no-config"):
            continue
        out.append(rel)
    return sorted(out)


def git_view(root: Path, paths: list[str], *, tracked: bool = True) -> dict[str, bool]:
    """path -> ignored, as ``git check-ignore`` says (with the index, unless not
    ``tracked``: then what the patterns alone say)."""
    stdin = b"".join(os.fsencode(path) + b"\0" for path in paths)
    out = git(
        root, "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n", stdin=stdin, check=False
    )
    fields = out.split(b"\0")
    view: dict[str, bool] = {}
    for index in range(0, len(fields) - 1, 4):
        source, _, pattern, path = fields[index : index + 4]
        view[os.fsdecode(path)] = bool(source) and not pattern.startswith(b"!")
    if not tracked:
        return view
    # check-ignore (without --no-index) reports a path the index holds, or a directory
    # holding one, as not ignored; it takes the paths as pathspecs, though, and allows no
    # ":(literal)", so that part is done here from the index as ``git ls-files`` lists it.
    for held in git(root, "ls-files", "-z").split(b"\0"):
        if held:
            parts = os.fsdecode(held).split("/")
            for end in range(1, len(parts) + 1):
                view["/".join(parts[:end])] = False
    return view


def our_view(root: Path, *, prefix_context: bool = True) -> dict[str, bool]:
    """path -> ignored, walking the tree as discovery walks it (an ignored directory is
    entered only for its tracked files; a directory holding tracked files is not ignored,
    as ``check-ignore`` reports it)."""
    rules = workspace_rules(str(root))
    assert rules.exclude_problem is None and rules.index_problem is None, rules
    chain = rules.chain or IgnoreChain(())
    view: dict[str, bool] = {}
    stack: list[tuple[Path, str, IgnoreChain]] = [(root, "", chain)]
    tracked = chain.tracked
    while stack:
        directory, rel, chain = stack.pop()
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        gitignore = next((e for e in entries if e.name == ".gitignore"), None)
        if gitignore is not None and gitignore.is_file(follow_symlinks=False):
            with open(gitignore.path, "rb") as handle:
                parsed, _ = IgnoreFile.parse(rel, handle.read(), prefix_context=prefix_context)
            chain = chain.extended(parsed)
        prefix = rel + "/" if rel else ""
        for entry in entries:
            path = prefix + entry.name
            if path == ".git" or path == ".no-config":
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            ignored = chain.ignored(path, entry.name, is_dir)
            if is_dir:
                holds = tracked is not None and tracked.holds(path)
                view[path] = ignored and not holds
                stack.append((Path(entry.path), path, chain.inside_ignored() if ignored else chain))
            else:
                view[path] = ignored
    return view


def git_version() -> tuple[int, ...]:
    assert GIT is not None
    out = subprocess.run([GIT, "--version"], capture_output=True, text=True, check=True).stdout
    return tuple(int(part) for part in out.split()[2].split(".")[:3] if part.isdigit())


def compare_batch(rng: random.Random, root: Path, cases: int) -> tuple[int, list[str]]:
    """(paths compared, divergences described) for one random batch."""
    batch = make_batch(rng, root, cases)
    track_some(rng, batch.root)
    paths = all_paths(batch.root)
    theirs = git_view(batch.root, paths)
    ours = our_view(batch.root, prefix_context=git_version() >= (2, 52))
    divergences = []
    for path in paths:
        if theirs.get(path) != ours.get(path):
            case = path.split("/", 1)[0]
            ignores = {
                p.relative_to(batch.root).as_posix(): p.read_bytes()
                for p in (batch.root / case).rglob(".gitignore")
            }
            exclude = batch.root / ".git" / "info" / "exclude"
            divergences.append(
                f"{path!r}: git {theirs.get(path)} ours {ours.get(path)}; {ignores}; "
                f"exclude {exclude.read_bytes() if exclude.exists() else None!r}"
            )
    return len(paths), divergences


NAMES_ORDER = ("AGENTS.override.md", "AGENTS.md")


def _legacy_prefix_corner(line: bytes) -> bool:
    """Whether git before 2.52 and git since read ``line`` differently: a pattern holding a
    slash whose literal prefix (not ending in ``/``) is directly followed by ``**``."""
    body = line[1:] if line.startswith(b"!") else line
    body = body.rstrip(b" ")
    body = body[:-1] if body.endswith(b"/") else body
    if b"/" not in body:
        return False
    body = body[1:] if body.startswith(b"/") else body
    cut = next((i for i, byte in enumerate(body) if byte in b"*?[\\"), len(body))
    return cut > 0 and body[cut : cut + 2] == b"**" and body[cut - 1 : cut] != b"/"


def drop_legacy_corners(root: Path) -> None:
    """Remove, from every ignore file under ``root``, the lines of ``_legacy_prefix_corner``
    (for a load-level comparison with a git older than 2.52; the path-level comparison
    covers them with ``prefix_context=False``)."""
    files = [p for p in root.rglob(".gitignore") if ".git" not in p.relative_to(root).parts]
    exclude = root / ".git" / "info" / "exclude"
    for path in [*files, *([exclude] if exclude.exists() else [])]:
        lines = path.read_bytes().split(b"\n")
        path.write_bytes(b"\n".join(line for line in lines if not _legacy_prefix_corner(line)))


LOCAL = "AGENTS.override.md"  # a local file: read although an ignore rule lists it


def git_instruction_files(root: Path) -> set[str]:
    """The instruction files git's view allows: per directory, the first of ``NAMES_ORDER``
    that is a regular file git does not ignore (tracked, or not ignored), or a local file
    (``LOCAL``) in a directory no pattern ignores (itself or an ancestor)."""
    paths = all_paths(root)
    view = git_view(root, paths)
    directories = {""} | {path for path in paths if (root / path).is_dir()}
    patterns = git_view(root, sorted(directories - {""}), tracked=False)
    chosen = set()
    for directory in directories:
        for name in NAMES_ORDER:
            rel = f"{directory}/{name}" if directory else name
            target = root / rel
            local = name == LOCAL and not _below_ignored(patterns, directory)
            if target.is_file() and not target.is_symlink() and (local or not view[rel]):
                chosen.add(rel)
                break
    return chosen


def _below_ignored(patterns: dict[str, bool], directory: str) -> bool:
    """Whether ``directory`` or one of its ancestors is ignored by a pattern."""
    parts = directory.split("/") if directory else []
    return any(patterns.get("/".join(parts[:end])) for end in range(1, len(parts) + 1))


def add_overrides(rng: random.Random, root: Path) -> None:
    """Sprinkle ``AGENTS.override.md`` files (so the per-directory choice is exercised)."""
    for agents in list(root.rglob("AGENTS.md")):
        if ".git" not in agents.relative_to(root).parts and rng.random() < 0.3:
            (agents.parent / "AGENTS.override.md").write_text("override\n")


def compare_load(rng: random.Random, root: Path, cases: int) -> tuple[int, list[str]]:
    """(instruction files expected, divergences) between ``discover`` (what
    ``InstructionFiles.load`` loads) and git's view, on one random batch."""
    from harness.instruction_files import InstructionFilesSettings, discover
    from tests.trees import display

    batch = make_batch(rng, root, cases)
    add_overrides(rng, batch.root)
    track_some(rng, batch.root)
    if git_version() < (2, 52):
        drop_legacy_corners(batch.root)
    expected = {display(path) for path in git_instruction_files(batch.root)}
    # deny_read off: this compares ignore decisions alone (random names include ".env")
    settings = InstructionFilesSettings(
        vendored=(), walk_threads=1, max_bytes=1 << 16, deny_read=()
    )
    found = discover(batch.root, settings)
    loaded = {source.path for source in found.sources}
    divergences = [
        f"{path!r}: {'loaded, git ignores it' if path in loaded else 'not loaded, git shows it'}"
        for path in sorted(loaded ^ expected)
    ]
    if divergences:
        divergences.append(f"warnings: {found.warnings}")
    return len(expected), divergences
