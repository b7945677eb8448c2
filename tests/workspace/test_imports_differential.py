"""A random differential of ``@path`` imports on real files: random import graphs (cycles,
cycles through file and directory symlinks, fan-out, missing files, code blocks) expanded
through the real door, against a reference expansion written here from the rules alone.

Every load must equal the reference, stay within the byte cap, and read each distinct path
at most once (work linear in what the cap lets through, whatever the fan-out).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import tempfile
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.workspace import SymlinkPolicy, resolve_workspace
from harness.workspace._import_door import ImportDoor, expand_file
from harness.workspace._imports import Imported

FILES = ("a.md", "b.md", "d/c.md", "d/e.md", "d/f/g.md")
LINKS = {"la.md": "a.md", "d/lc.md": "c.md", "ld": "d"}  # name -> what the symlink says
MISSING = ("nope.md", "d/nope.md")


def real_of(path: str) -> str | None:
    """The real path of a workspace path through the links above (None: missing)."""
    parts: list[str] = []
    for part in path.split("/"):
        here = "/".join((*parts, part))
        if here in LINKS:
            parts = posixpath.normpath(posixpath.join("/".join(parts), LINKS[here])).split("/")
        else:
            parts.append(part)
    real = "/".join(parts)
    return real if real in FILES else None


NAMES = (*FILES, *LINKS.keys() - {"ld"}, "ld/c.md", "ld/e.md", "ld/lc.md", "ld/f/g.md", *MISSING)


def plain() -> st.SearchStrategy[str]:
    return st.sampled_from(["text", "", "   ", "more words", "```", "    code"])


def line() -> st.SearchStrategy[tuple[str, str]]:
    """A line: ("text", it) or ("import", the workspace path it names) or ("code", path): an
    import line indented as code."""
    return st.one_of(
        plain().map(lambda text: ("text", text)),
        st.sampled_from(NAMES).map(lambda name: ("import", name)),
        st.sampled_from(NAMES).map(lambda name: ("code", name)),
    )


def render(importer: str, lines: list[tuple[str, str]]) -> str:
    out = []
    for kind, value in lines:
        if kind == "text":
            out.append(value)
            continue
        relative = posixpath.relpath(value, posixpath.dirname(importer) or ".")
        out.append(f"@{relative}" if kind == "import" else f"\n    @{relative}")
    return "\n".join(out) + "\n"


def code(lines: list[str]) -> list[bool]:
    """The reference's code blocks: a ``` fence toggles; a line indented four spaces after
    a blank line (or first) opens an indented block that blank or indented lines continue."""
    inside, fence, indented, blank_before = [], False, False, True
    for text in lines:
        blank = not text.strip()
        if text.startswith("```"):
            fence, indented = not fence, False
            inside.append(True)
        elif fence:
            inside.append(True)
        elif blank:
            inside.append(indented)
        elif text.startswith("    ") and (indented or blank_before):
            indented = True
            inside.append(True)
        else:
            indented = False
            inside.append(False)
        blank_before = blank
    return inside


@dataclass
class Reference:
    texts: dict[str, str]  # real path -> text
    cap: int
    spent: int = 0

    def expand(self, rel: str, text: str, stack: list[tuple[str, str]]) -> str:
        lines = text.split("\n")
        out = []
        for line_text, in_code in zip(lines, code(lines), strict=True):
            stripped = line_text.strip()
            if in_code or not stripped.startswith("@") or len(stripped) < 2:
                out.append(line_text)
                continue
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), stripped[1:]))
            real = real_of(joined)
            if (
                joined in [name for name, _ in stack]
                or len(stack) > 4
                or real is None
                or real in [seen for _, seen in stack]
                or self.spent + len(self.texts[real].encode()) > self.cap
            ):
                out.append(line_text)
                continue
            self.spent += len(self.texts[real].encode())
            self.imports.setdefault(joined, hashlib.sha256(self.texts[real].encode()).hexdigest())
            out.append(self.expand(joined, self.texts[real], [*stack, (joined, real)]))
            out[-1] = out[-1].removesuffix("\n")
        return "\n".join(out)

    def __post_init__(self) -> None:
        self.imports: dict[str, str] = {}


class Counting(ImportDoor):
    """The real door, counting what it is asked to read."""

    def __init__(self, policy: SymlinkPolicy, *, cap: int) -> None:
        super().__init__(policy, cap=cap)
        self.asked: list[str] = []

    def __call__(self, rel: str) -> Imported:
        self.asked.append(rel)
        return super().__call__(rel)


graphs = st.fixed_dictionaries(
    {name: st.lists(line(), max_size=12) for name in FILES},
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs, st.sampled_from(FILES), st.integers(min_value=20, max_value=4000), st.data())
def test_random_import_graphs_expand_as_the_reference(
    graph: dict[str, list[tuple[str, str]]], top: str, cap: int, data: st.DataObject
) -> None:
    texts = {name: render(name, lines) for name, lines in graph.items()}
    fan = data.draw(st.integers(min_value=0, max_value=200), label="fan-out")
    texts["a.md"] += f"@{posixpath.relpath('b.md', '.')}\n" * fan
    with tempfile.TemporaryDirectory() as tmp:
        root = resolve_workspace(tmp)
        for name, text in texts.items():
            os.makedirs(os.path.join(root, posixpath.dirname(name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as out:
                out.write(text)
        for name, target in LINKS.items():
            os.symlink(target, os.path.join(root, name))
        top_text = texts[top]
        cap = max(cap, len(top_text.encode()))
        with SymlinkPolicy(root, prune=()) as policy:
            door = Counting(policy, cap=cap)
            text, imports, _ = expand_file(door, top, top_text)
    reference = Reference(texts, cap, spent=len(top_text.encode()))
    assert text == reference.expand(top, top_text, [(top, top)])
    assert imports == tuple(reference.imports.items())
    assert len(text.encode()) <= cap
    assert len(door.asked) == len(set(door.asked))  # each path read at most once
