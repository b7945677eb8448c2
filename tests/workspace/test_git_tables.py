"""git's own test tables (t3070-wildmatch.sh, t0008-ignores.sh) run through our matcher.

The rows are data (``data/t3070.jsonl`` from ``data/convert_t3070.py``, ``data/t0008.json``
transcribed by hand); each t0008 scenario is also replayed on the installed git, so a wrong
transcription fails here rather than passing silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.workspace._git_index import TrackedPaths
from harness.workspace._ignore import IgnoreChain, IgnoreFile
from harness.workspace._wildmatch import wildmatch
from tests.workspace.ignore_cases import GIT, git, git_version

DATA = Path(__file__).parent / "data"
T3070 = [json.loads(line) for line in (DATA / "t3070.jsonl").read_text("utf-8").splitlines()]
T0008 = json.loads((DATA / "t0008.json").read_text("utf-8"))["scenarios"]


def test_the_t3070_table_is_all_there() -> None:
    assert len(T3070) == 190


@pytest.mark.parametrize("row", T3070, ids=[f"line{row['line']}" for row in T3070])
def test_t3070_rows(row: dict[str, object]) -> None:
    text = str(row["text"]).encode("utf-8")
    pattern = str(row["pattern"]).encode("utf-8")
    # WM_PATHNAME: how .gitignore matches a pattern holding a slash.
    assert wildmatch(pattern, text, pathname=True) is bool(row["wildmatch"])
    # No flags: how it matches a pattern without a slash against a name.
    assert wildmatch(pattern, text, pathname=False) is bool(row["pathmatch"])


def decide(scenario: dict[str, object], path: str, is_dir: bool, prefix_context: bool) -> bool:
    """Whether ``path`` is ignored, evaluated as a walk reaches it: from the root down, each
    directory's ``.gitignore`` applied below it, an ignored directory hiding all it holds."""
    files = {
        rel: IgnoreFile.parse(
            rel.rpartition("/")[0], content.encode("utf-8"), prefix_context=prefix_context
        )[0]
        for rel, content in dict(scenario["files"]).items()  # type: ignore[call-overload]
        if rel.endswith(".gitignore")
    }
    tracked_list = list(scenario["tracked"])  # type: ignore[call-overload]
    dirs = {"/".join(p.split("/")[:n]) for p in tracked_list for n in range(1, p.count("/") + 1)}
    tracked = TrackedPaths(frozenset(tracked_list), frozenset(dirs))
    exclude = scenario["exclude"]
    base = () if exclude is None else (IgnoreFile.parse("", str(exclude).encode())[0],)
    chain = IgnoreChain(base, tracked)
    parts = path.split("/")
    for index, name in enumerate(parts):
        parent = "/".join(parts[:index])
        own = files.get(f"{parent}/.gitignore" if parent else ".gitignore")
        if own is not None:
            chain = chain.extended(own)
        rel = "/".join(parts[: index + 1])
        last = index == len(parts) - 1
        ignored = chain.ignored(rel, name, is_dir or not last)
        if last:
            return ignored
        if ignored:
            chain = chain.inside_ignored()
    raise AssertionError("unreachable")


@pytest.mark.parametrize("scenario", T0008, ids=[s["name"] for s in T0008])
def test_t0008_scenarios(scenario: dict[str, object]) -> None:
    modern = tuple(scenario.get("min_git", ())) > (0,)  # type: ignore[arg-type]
    for path, is_dir, expected in scenario["cases"]:  # type: ignore[attr-defined]
        assert decide(scenario, path, is_dir, True) is expected, path
        if not modern:  # git before 2.52 agrees on every row but those of the fix
            assert decide(scenario, path, is_dir, False) is expected, path


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize("scenario", T0008, ids=[s["name"] for s in T0008])
def test_t0008_rows_hold_on_the_installed_git(tmp_path: Path, scenario: dict[str, object]) -> None:
    needed = tuple(scenario.get("min_git", (0,)))  # type: ignore[arg-type]
    if git_version() < needed:
        pytest.skip(f"the row tests a fix of git {needed}")
    git(tmp_path, "init", "-q")
    for rel, content in dict(scenario["files"]).items():  # type: ignore[call-overload]
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    for path, is_dir, _ in scenario["cases"]:  # type: ignore[attr-defined]
        if is_dir:
            (tmp_path / path).mkdir(parents=True, exist_ok=True)
    if scenario["exclude"] is not None:
        (tmp_path / ".git" / "info").mkdir(exist_ok=True)
        (tmp_path / ".git" / "info" / "exclude").write_text(str(scenario["exclude"]))
    if scenario["tracked"]:
        git(tmp_path, "add", "-f", *scenario["tracked"])  # type: ignore[misc]
    for path, is_dir, expected in scenario["cases"]:  # type: ignore[attr-defined]
        if (tmp_path / path).exists() and (tmp_path / path).is_dir() != is_dir:
            continue  # the scenario names a path both ways; the tree holds one of them
        ignored = git(tmp_path, "check-ignore", path, check=False) != b""
        assert ignored is expected, path
