"""The generated monorepo ``benchmarks/discovery.py`` (and ``benchmarks/formats.py``) walk.

    from monorepo import generate
    made = generate(Path("/tmp/tree"), dirs=2000, packages=40, git_dirs=600, node_packages=500)

A root ``AGENTS.md`` and ``.gitignore``; ``packages/`` with ``dirs`` source directories spread
over ``packages`` packages, some with deeper ``AGENTS.md``/``AGENTS.override.md`` files; a
``.git`` with ``git_dirs`` directories; a ``node_modules`` with ``node_packages`` packages
(each with an ``AGENTS.md`` that must NOT be found); gitignored ``dist/``/``coverage/`` and
nested-``.gitignore``-ignored ``generated/`` directories holding instruction files that must
not be found either. Seeded: the same arguments make the same tree.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

GITIGNORED = ("dist", "coverage")  # root .gitignore: "dist/", "coverage/", "*.log", "/tmp/"
NESTED_IGNORED = "generated"  # a nested .gitignore in some packages: "generated/"


def generate(root: Path, *, dirs: int, packages: int, git_dirs: int, node_packages: int) -> int:
    """Build the monorepo under ``root``; returns the number of directories created."""
    rng = random.Random(20240601)
    made = 0

    def mkdir(path: Path) -> None:
        nonlocal made
        path.mkdir(parents=True, exist_ok=True)
        made += 1

    def touch(path: Path, text: str = "x\n") -> None:
        path.write_text(text)

    mkdir(root)
    (root / "AGENTS.md").write_text("# Monorepo rules\nUse the shared lint config.\n")
    (root / ".gitignore").write_text("dist/\ncoverage/\n*.log\n/tmp/\n")
    mkdir(root / "tmp")
    touch(root / "tmp" / "AGENTS.md", "ignored by /tmp/\n")

    # .git: objects fan-out plus submodule object stores, a few files each.
    git = root / ".git"
    stores = [git] + [git / "modules" / f"sub{k}" for k in range(max(0, git_dirs // 256))]
    count = 0
    for store in stores:
        for byte in range(256):
            if count >= git_dirs:
                break
            folder = store / "objects" / f"{byte:02x}"
            mkdir(folder)
            touch(folder / f"{rng.getrandbits(64):016x}")
            count += 1
    touch(git / "HEAD", "ref: refs/heads/main\n")

    # node_modules: thousands of packages, each with lib/ and dist/ and an AGENTS.md.
    for index in range(node_packages):
        package = root / "node_modules" / f"dep-{index}"
        mkdir(package / "lib")
        mkdir(package / "dist")
        touch(package / "package.json", "{}\n")
        touch(package / "lib" / "index.js")
        touch(package / "AGENTS.md", "vendored: must not be found\n")

    # packages/: the source tree.
    per_package = max(1, dirs // packages)
    for number in range(packages):
        package = root / "packages" / f"pkg-{number:03d}"
        mkdir(package)
        touch(package / "package.json", "{}\n")
        touch(package / "AGENTS.md", f"# pkg-{number:03d}\nRun its tests before pushing.\n")
        folders = [package]
        for _ in range(per_package - 1):
            parent = rng.choice(folders) if len(folders) < 8 or rng.random() < 0.7 else package
            child = parent / f"m{len(folders)}"
            mkdir(child)
            folders.append(child)
            for name in ("index.ts", "util.ts", "README.md"):
                touch(child / name)
        # A few deeper instruction files, some of them overrides.
        for child in rng.sample(folders[1:], k=min(len(folders) - 1, 1)):
            name = "AGENTS.override.md" if rng.random() < 0.3 else "AGENTS.md"
            touch(child / name, f"# {child.name}\nKeep this module pure.\n")
        # Ignored directories holding instruction files that must not be found.
        if number % 4 == 0:
            for ignored in GITIGNORED:
                mkdir(package / ignored / "nested")
                touch(package / ignored / "AGENTS.md", "ignored\n")
        if number % 10 == 0:
            touch(package / ".gitignore", f"{NESTED_IGNORED}/\n")
            mkdir(package / NESTED_IGNORED / "deep")
            touch(package / NESTED_IGNORED / "AGENTS.md", "ignored by a nested .gitignore\n")
        if number % 5 == 0:  # a package-local node_modules too
            mkdir(package / "node_modules" / "left-pad" / "lib")
            touch(package / "node_modules" / "left-pad" / "AGENTS.md", "vendored\n")
    return made


def deepest_target(root: Path) -> str:
    """A file about to be created in the deepest source directory (ties: the first by path)."""
    deepest = ""
    for top, dirs, _ in os.walk(root / "packages"):
        dirs[:] = sorted(d for d in dirs if d not in ("node_modules", *GITIGNORED, NESTED_IGNORED))
        rel = Path(top).relative_to(root).as_posix()
        if rel.count("/") > deepest.count("/"):
            deepest = rel
    return f"{deepest}/new_module.ts"
