"""CONTRACT §1 Tokenizer: acceptance tests derived from the contract text only."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ApproximateTokenizer, TiktokenTokenizer, Tokenizer

TEXTS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)


# --- Protocol -------------------------------------------------------------------------------


def test_tokenizer_protocol_is_runtime_checkable() -> None:
    class Custom:
        name = "custom"
        estimated = True

        def count(self, text: str) -> int:
            return len(text)

        def truncate(self, text: str, max_tokens: int) -> str:
            return text[:max_tokens]

    assert isinstance(Custom(), Tokenizer)
    assert isinstance(ApproximateTokenizer(), Tokenizer)
    assert not isinstance(object(), Tokenizer)


def test_tiktoken_tokenizer_satisfies_protocol(cl100k: TiktokenTokenizer) -> None:
    assert isinstance(cl100k, Tokenizer)
    assert isinstance(cl100k.name, str) and cl100k.name


# --- ApproximateTokenizer ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [("", 0), ("hello world", 3), ("你好", 2)])
def test_approximate_exact_counts(text: str, expected: int) -> None:
    assert ApproximateTokenizer().count(text) == expected


def test_approximate_default_bytes_per_token_is_4() -> None:
    assert ApproximateTokenizer().count("a" * 8) == 2
    assert ApproximateTokenizer().count("a" * 9) == 3


def test_approximate_is_estimated_and_named() -> None:
    tok = ApproximateTokenizer()
    assert tok.estimated is True
    assert isinstance(tok.name, str) and tok.name


@pytest.mark.parametrize("bpt", [1, 2, 3, 4, 7])
@given(text=TEXTS)
@settings(max_examples=50, deadline=None)
def test_approximate_count_formula(bpt: int, text: str) -> None:
    assert ApproximateTokenizer(bpt).count(text) == math.ceil(len(text.encode("utf-8")) / bpt)
    assert ApproximateTokenizer(bytes_per_token=bpt).count(text) == math.ceil(
        len(text.encode("utf-8")) / bpt
    )


@pytest.mark.parametrize("bpt", [0, -1, -4])
def test_approximate_bytes_per_token_below_one_raises(bpt: int) -> None:
    with pytest.raises(ValueError):
        ApproximateTokenizer(bpt)


@given(text=TEXTS, n=st.integers(min_value=0, max_value=80), bpt=st.integers(1, 6))
@settings(max_examples=200, deadline=None)
def test_approximate_truncate_is_longest_prefix_that_fits(text: str, n: int, bpt: int) -> None:
    tok = ApproximateTokenizer(bpt)
    out = tok.truncate(text, n)
    assert text.startswith(out)
    assert tok.count(out) <= n
    # longest: one more code point would not fit
    if len(out) < len(text):
        assert tok.count(text[: len(out) + 1]) > n
    # never cutting a code point: the result is valid text that re-encodes losslessly
    out.encode("utf-8")


def test_approximate_truncate_never_cuts_a_code_point() -> None:
    tok = ApproximateTokenizer(1)
    # "你" is 3 bytes; 4 one-byte tokens allow "a" + "你" but not part of the next one
    assert tok.truncate("a你好", 4) == "a你"
    assert tok.truncate("a你好", 3) == "a"
    assert tok.truncate("a你好", 0) == ""


def test_approximate_truncate_whole_text_when_it_fits() -> None:
    assert ApproximateTokenizer().truncate("hello world", 3) == "hello world"
    assert ApproximateTokenizer().truncate("", 0) == ""


@pytest.mark.parametrize("n", [-1, -100])
def test_approximate_truncate_negative_raises(n: int) -> None:
    with pytest.raises(ValueError):
        ApproximateTokenizer().truncate("hello", n)


# --- TiktokenTokenizer ------------------------------------------------------------------------

SAMPLES = [
    "",
    "hello world",
    "你好\uff0c世界",
    "def f(x):\n    return x  # 🚀\n",
    "  leading and trailing   \n\n",
    "The quick brown fox jumps over the lazy dog. " * 20,
]


def test_tiktoken_from_path_counts_exactly_as_cl100k(
    cl100k: TiktokenTokenizer, reference_encoding: object
) -> None:
    assert cl100k.estimated is False
    for text in SAMPLES:
        assert cl100k.count(text) == len(reference_encoding.encode_ordinary(text))  # type: ignore[attr-defined]
    assert cl100k.count("hello world") == 2


def test_tiktoken_from_str_path(cl100k_file: Path, reference_encoding: object) -> None:
    tok = TiktokenTokenizer(str(cl100k_file))
    assert tok.estimated is False
    for text in SAMPLES:
        assert tok.count(text) == len(reference_encoding.encode_ordinary(text))  # type: ignore[attr-defined]


def test_tiktoken_from_encoding_object(reference_encoding: object) -> None:
    tok = TiktokenTokenizer(reference_encoding)  # type: ignore[arg-type]
    assert tok.estimated is False
    for text in SAMPLES:
        assert tok.count(text) == len(reference_encoding.encode_ordinary(text))  # type: ignore[attr-defined]


def test_tiktoken_stem_named_copy_counts_as_cl100k(
    tmp_path: Path, cl100k_file: Path, reference_encoding: object
) -> None:
    """A rank file is read with the split pattern of the encoding its stem names."""
    copy = tmp_path / "models" / "cl100k_base.tiktoken"
    copy.parent.mkdir()
    shutil.copyfile(cl100k_file, copy)
    tok = TiktokenTokenizer(copy)
    # Texts whose count depends on the split pattern (numbers split in groups of <= 3,
    # contractions, whitespace runs) must match cl100k_base exactly.
    for text in [*SAMPLES, "1234567890 it's we'll     x\n\n\n  y", "ABC123def'LL"]:
        assert tok.count(text) == len(reference_encoding.encode_ordinary(text))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text", ["<|endoftext|>", "a<|endoftext|>b", "<|fim_prefix|><|endofprompt|>x"]
)
def test_tiktoken_special_tokens_are_plain_text(
    cl100k: TiktokenTokenizer, reference_encoding: object, text: str
) -> None:
    assert cl100k.count(text) == len(reference_encoding.encode_ordinary(text))  # type: ignore[attr-defined]
    assert cl100k.count(text) > 1
    out = cl100k.truncate(text, 2)
    assert text.startswith(out)
    assert cl100k.count(out) <= 2


def test_tiktoken_unknown_name_raises_at_construction() -> None:
    with pytest.raises(Exception) as info:
        TiktokenTokenizer("no_such_encoding_for_contract_tests")
    assert str(info.value)


def test_tiktoken_missing_file_raises_at_construction(tmp_path: Path) -> None:
    with pytest.raises(Exception) as info:
        TiktokenTokenizer(tmp_path / "cl100k_base.tiktoken")
    assert str(info.value)


@given(text=TEXTS, n=st.integers(min_value=0, max_value=60))
@settings(max_examples=80, deadline=None)
def test_tiktoken_truncate_prefix_fits_and_is_close(
    cl100k: TiktokenTokenizer, text: str, n: int
) -> None:
    out = cl100k.truncate(text, n)
    assert text.startswith(out)
    assert cl100k.count(out) <= n
    if cl100k.count(text) <= n:
        return
    assert cl100k.count(out) >= n - 4, "exact truncate must be within a few tokens of n"


def test_tiktoken_truncate_never_cuts_a_code_point(cl100k: TiktokenTokenizer) -> None:
    text = "🚀🎉你好世界" * 10 + "ünïcödé" * 10
    for n in range(0, 30):
        out = cl100k.truncate(text, n)
        assert text.startswith(out)
        assert "\ufffd" not in out
        assert cl100k.count(out) <= n


def test_tiktoken_truncate_negative_raises(cl100k: TiktokenTokenizer) -> None:
    with pytest.raises(ValueError):
        cl100k.truncate("hello", -1)
