""" "The same file" across a walk: inode numbers are pinned, so a freed, reused number never
makes discovery drop a file (regression: atomic saves during a walk dropped files)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.instruction_files import InstructionFilesSettings, discover, discovery
from harness.instruction_files.discovery import Directory
from harness.workspace import _identity as identity
from tests.filesystem import reuses_inodes_at_once, run_python_in_child

Writer = Callable[[str, str | bytes], Path]
ONE_THREAD = InstructionFilesSettings(walk_threads=1)


def _atomic_save(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def save_after_first_read(ws: Path, write: Writer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """a/ and b/ hold an AGENTS.md. Right after the walk reads its first file, that file is
    replaced by an atomic save (freeing its inode unless discovery holds it) and then the
    other one is (its temporary file is the next new file: it gets the freed number on a
    filesystem that reuses numbers at once). Returns the rels saved, for the asserts."""
    if not reuses_inodes_at_once(ws.parent):
        pytest.skip("this filesystem does not reuse inode numbers at once (e.g. tmpfs)")
    write("a/AGENTS.md", "a v0\n")
    write("b/AGENTS.md", "b v0\n")
    read = Directory.read
    saved: list[str] = []

    def read_then_save(self: Directory, name: str, *args: Any, **kwargs: Any) -> None:
        read(self, name, *args, **kwargs)
        if saved:
            return
        first = self.prefix + name
        other = "b/AGENTS.md" if first == "a/AGENTS.md" else "a/AGENTS.md"
        _atomic_save(ws / first, f"{first} v1\n")
        _atomic_save(ws / other, f"{other} v1\n")
        saved.extend((first, other))

    monkeypatch.setattr(Directory, "read", read_then_save)
    return saved


def test_a_number_freed_and_reused_during_the_walk_does_not_drop_a_file(
    ws: Path, save_after_first_read: list[str]
) -> None:
    for _ in range(10):  # the reuse is likely, not certain: repeat the scenario
        save_after_first_read.clear()
        found = discover(ws, ONE_THREAD)
        assert [s.path for s in found] == ["a/AGENTS.md", "b/AGENTS.md"], found.warnings
        assert found.warnings == ()
        first, other = save_after_first_read
        # the first file as read before its save; the other as saved meanwhile
        contents = {s.path: s.content for s in found}
        assert contents[first] in (f"{first.split('/')[0]} v0\n", f"{first} v1\n")
        assert contents[other] == f"{other} v1\n"


def test_past_the_descriptor_budget_no_file_is_dropped_either(
    ws: Path, save_after_first_read: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no descriptor to spare, single-link files are named by their real path."""
    empty = identity.PinBudget()
    monkeypatch.setattr(empty, "_free", 0)
    monkeypatch.setattr(identity, "PINS", empty)
    for _ in range(10):
        save_after_first_read.clear()
        found = discover(ws, ONE_THREAD)
        assert [s.path for s in found] == ["a/AGENTS.md", "b/AGENTS.md"], found.warnings


@pytest.mark.parametrize("budget", [0, 1, None], ids=["no-pins", "one-pin", "default"])
def test_duplicates_are_loaded_once_whatever_the_budget(
    ws: Path, write: Writer, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    if budget is not None:
        pins = identity.PinBudget()
        monkeypatch.setattr(pins, "_free", budget)
        monkeypatch.setattr(identity, "PINS", pins)
    write("a/AGENTS.md", "a rules\n")
    write("m/AGENTS.md", "m rules\n")
    (ws / "b").mkdir()
    (ws / "b" / "AGENTS.md").symlink_to("../a/AGENTS.md")  # a symlink to a single-link file
    (ws / "n").mkdir()
    os.link(ws / "m" / "AGENTS.md", ws / "n" / "AGENTS.md")  # a hard link
    (ws / "o").mkdir()
    (ws / "o" / "AGENTS.md").symlink_to("../n/AGENTS.md")  # a symlink to the hard link

    found = discover(ws, ONE_THREAD)

    assert [s.path for s in found] == ["a/AGENTS.md", "m/AGENTS.md"]
    notes = sorted(w.split(" (hard link")[0] for w in found.warnings)
    assert notes == [
        "b/AGENTS.md: skipped: the same file as a/AGENTS.md",
        "n/AGENTS.md: skipped: the same file as m/AGENTS.md",
        "o/AGENTS.md: skipped: the same file as m/AGENTS.md",
    ]


def test_pinned_descriptors_are_released_when_the_walk_ends(ws: Path, write: Writer) -> None:
    for n in range(40):
        write(f"d{n}/AGENTS.md", f"{n}\n")
    before = _open_descriptors()
    found = discover(ws, ONE_THREAD)
    assert len(found.sources) == 40
    assert _open_descriptors() == before
    assert identity.PINS._free == identity.pin_capacity()


def test_pinned_descriptors_are_released_when_the_walk_is_cancelled(
    ws: Path, write: Writer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(20):
        write(f"d{n}/AGENTS.md", f"{n}\n")
    stop = threading.Event()
    read = Directory.read
    reads: list[None] = []

    def read_then_stop(self: Directory, *args: Any, **kwargs: Any) -> None:
        read(self, *args, **kwargs)
        reads.append(None)
        if len(reads) == 5:
            stop.set()

    monkeypatch.setattr(Directory, "read", read_then_stop)
    before = _open_descriptors()
    with pytest.raises(discovery.DiscoveryCancelled):
        discover(ws, ONE_THREAD, stop=stop)
    assert len(reads) == 5
    assert _open_descriptors() == before
    assert identity.PINS._free == identity.pin_capacity()


def test_thousands_of_files_under_a_low_descriptor_limit(ws: Path, write: Writer) -> None:
    """2,000 instruction files (some hard-linked) in a child limited to 64 open files: the
    pins stay within their budget, every file is loaded and every duplicate is caught."""
    for n in range(2000):
        write(f"d{n:04}/AGENTS.md", f"{n}\n")
    for n in range(0, 2000, 100):  # 20 hard links to files of the tree
        (ws / f"h{n:04}").mkdir()
        os.link(ws / f"d{n:04}" / "AGENTS.md", ws / f"h{n:04}" / "AGENTS.md")
    script = (
        "import os, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "from harness.instruction_files import InstructionFilesSettings, discover\n"
        "before = len(os.listdir('/proc/self/fd'))\n"
        "for threads in (1, 4):\n"
        "    found = discover(sys.argv[1], InstructionFilesSettings(walk_threads=threads))\n"
        "    same = sum('same file as' in w for w in found.warnings)\n"
        "    print(len(found.sources), len(found.warnings), same)\n"
        "print(len(os.listdir('/proc/self/fd')) - before)\n"
    )
    output = run_python_in_child(script, str(ws))
    assert output.split("\n")[:3] == ["2000 20 20", "2000 20 20", "0"]
