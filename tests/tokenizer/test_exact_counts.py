"""Exact counts without a Python list of ids (issue 18, section 1).

``TiktokenTokenizer`` counts through tiktoken's native id buffer, in pieces cut where the split
pattern splits anyway, and truncates by turning only the kept prefix into ids, in slices. These
tests hold it to ``encode_ordinary`` of the whole text exactly, for each public split pattern
(with the genuine cl100k ranks: where the pieces may be cut depends on the pattern only), with
pieces made tiny so that every boundary in a text is a cut.
"""

from __future__ import annotations

import itertools

import pytest
import regex
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import TiktokenTokenizer
from harness._encodings import SPLITTABLE_PATTERNS
from harness._tokenizer import _BOUNDARY, _DECODE_SLICE, _pieces

SPECIALS = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
]

# Pieces from many scripts and the places where BPE pre-tokenisation splits: letters next to
# digits, apostrophes, whitespace runs before words and at the end, newlines after spaces.
PIECES = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=8),
    st.text(st.characters(categories=["Cs"]), max_size=2),  # lone surrogates: repaired alike
    st.sampled_from(
        [
            *SPECIALS,
            "<|endoftext",
            "|>",
            "hello",
            " world",
            "don't",
            "'S",
            "12345678",
            "3.14159",
            "你好世界",
            "日本語のテキスト",
            "한국어",
            "Привет",
            "مرحبا",
            "🎉",
            "👩\u200d👩\u200d👧",
            "🇫🇷",
            "e\u0301",
            "\u0301\u0302",
            "   ",
            "\t\t",
            "\n\n\n",
            " \n",
            "\r\n",
            "\u3000",
            "\u00a0",
            # letters just before a cut, and the characters a cut may or may not precede
            "a.",
            "b,",
            "x\n",
            "Q ",
            "z9",
            "k'",
            "it's",
            "IT'S ",
            "word\u0301",
            "好。",
            "字\uff0c",
            "中、",
            "文 ",
            "ß ",
            "é.",
            "你好",
            "   \n",
            "a\u2019s",
        ]
    ),
)
MIXED = st.lists(PIECES, max_size=60).map("".join)
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(text=MIXED)
def test_counts_equal_encode_ordinary(cl100k: TiktokenTokenizer, text: str) -> None:
    fresh = TiktokenTokenizer(cl100k.encoding)  # nothing memoised: every count is computed
    assert fresh.count(text) == len(cl100k.encoding.encode_ordinary(text))


@SETTINGS
@given(text=MIXED, repeat=st.integers(1, 400))
def test_counts_equal_encode_ordinary_on_long_texts(
    cl100k: TiktokenTokenizer, text: str, repeat: int
) -> None:
    long = text * repeat
    fresh = TiktokenTokenizer(cl100k.encoding)
    assert fresh.count(long) == len(cl100k.encoding.encode_ordinary(long))


@pytest.fixture(scope="module", params=sorted(SPLITTABLE_PATTERNS))
def encoding(request: pytest.FixtureRequest, cl100k: TiktokenTokenizer) -> tiktoken.Encoding:
    """The genuine cl100k ranks under each public split pattern."""
    enc = cl100k.encoding
    return tiktoken.Encoding(
        name=f"pattern{sorted(SPLITTABLE_PATTERNS).index(request.param)}",
        pat_str=request.param,
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens=enc._special_tokens,
    )


@SETTINGS
@given(text=MIXED, piece=st.integers(1, 40))
def test_counts_in_tiny_pieces_equal_encode_ordinary_of_the_whole(
    encoding: tiktoken.Encoding, text: str, piece: int
) -> None:
    tok = TiktokenTokenizer(encoding)
    assert tok._piece_chars is not None  # the public patterns are cut into pieces
    tok._piece_chars = piece  # every boundary in the text becomes a cut
    assert tok.count(text) == len(encoding.encode_ordinary(text))


@SETTINGS
@given(text=MIXED, piece=st.integers(1, 40), n=st.integers(0, 40))
def test_truncation_in_tiny_pieces_fits_and_is_close(
    encoding: tiktoken.Encoding, text: str, piece: int, n: int
) -> None:
    tok = TiktokenTokenizer(encoding)
    tok._piece_chars = piece
    cut = tok.truncate(text, n)
    assert text.startswith(cut)
    kept = len(encoding.encode_ordinary(cut))
    assert kept <= n
    if len(encoding.encode_ordinary(text)) <= n:
        assert cut == text
    else:  # within a few tokens of n, unless the next code point alone costs more
        assert kept >= n - 4 or len(encoding.encode_ordinary(text[: len(cut) + 1])) > n


@SETTINGS
@given(text=MIXED, piece=st.integers(1, 40))
def test_every_cut_is_where_the_split_pattern_splits_anyway(
    encoding: tiktoken.Encoding, text: str, piece: int
) -> None:
    # The pre-tokeniser's pieces of the whole are the pieces of the parts, for any ranks
    # (``regex`` is the module tiktoken's own reference implementation splits with).
    pattern = regex.compile(encoding._pat_str)
    parts = [pattern.findall(text[a:b]) for a, b in _pieces(text, piece)]
    assert [p for part in parts for p in part] == pattern.findall(text)


@given(text=MIXED, piece=st.integers(1, 40))
def test_pieces_tile_the_text_and_are_cut_only_at_boundaries(text: str, piece: int) -> None:
    spans = list(_pieces(text, piece))
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(a < b for a, b in spans)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end == start
        assert _BOUNDARY.match(text, end - 1) is not None  # a letter, then a cut-safe char


def test_an_unknown_split_pattern_is_encoded_whole(cl100k: TiktokenTokenizer) -> None:
    enc = cl100k.encoding
    custom = tiktoken.Encoding(
        name="words",
        pat_str=r"\S+|\s+",
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens={},
    )
    tok = TiktokenTokenizer(custom)
    assert tok._piece_chars is None
    text = "no cut here. " * 20_000
    assert tok.count(text) == len(custom.encode_ordinary(text))


def test_special_token_strings_are_never_special(cl100k: TiktokenTokenizer) -> None:
    for special in SPECIALS:
        text = f"a{special}b {special}"
        ids = cl100k._ids(text)
        assert list(ids) == cl100k.encoding.encode_ordinary(text)
        assert cl100k.encoding.encode_single_token(special) not in list(ids)


def test_ids_are_a_native_buffer_not_a_list(cl100k: TiktokenTokenizer) -> None:
    # A list of a million ints holds the GIL for tens of ms: counting must not build one.
    text = "hello world " * 100
    ids = cl100k._ids(text)
    assert isinstance(ids, memoryview) and not isinstance(ids, list)
    expected = cl100k.encoding.encode_ordinary(text)
    assert ids.itemsize == 4 and ids.nbytes == 4 * len(ids) == 4 * len(expected)
    assert list(ids) == expected


def test_an_encoding_subclass_keeps_its_own_encode_ordinary(cl100k: TiktokenTokenizer) -> None:
    enc = cl100k.encoding

    class Shouting(tiktoken.Encoding):
        def encode_ordinary(self, text: str) -> list[int]:
            return super().encode_ordinary(text.upper())

    shouting = Shouting(
        name="shouting",
        pat_str=enc._pat_str,
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens=enc._special_tokens,
    )
    assert TiktokenTokenizer(shouting).count("hello") == len(enc.encode_ordinary("HELLO"))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=MIXED.filter(bool), data=st.data())
def test_prefixes_decode_the_same_across_slice_boundaries(
    cl100k: TiktokenTokenizer, text: str, data: st.DataObject
) -> None:
    enc = cl100k.encoding
    long = text
    while len(reference := enc.encode_ordinary(long)) < 2 * _DECODE_SLICE + 3:
        # Repeats may merge into fewer tokens: grow until both boundaries exist. The "x"
        # between copies bounds every whitespace run by the drawn text: doubled "\n\n\n" alone
        # needs 1.5M characters (32 a token) and took minutes on a loaded machine.
        long = f"{long}x{long}"
    ids = cl100k._ids(long)
    boundary = data.draw(st.sampled_from([1, _DECODE_SLICE, 2 * _DECODE_SLICE]))
    keep = data.draw(st.integers(max(0, boundary - 3), min(len(reference), boundary + 3)))
    expected = enc.decode_bytes(reference[:keep]).decode("utf-8", "ignore") if keep else ""
    assert cl100k._decode_prefix(ids, keep) == expected


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=MIXED.filter(bool), data=st.data())
def test_truncation_of_long_texts_fits_and_is_a_prefix(
    cl100k: TiktokenTokenizer, text: str, data: st.DataObject
) -> None:
    enc = cl100k.encoding
    long = text * (_DECODE_SLICE // max(1, len(enc.encode_ordinary(text))) + 2)
    total = len(enc.encode_ordinary(long))
    n = data.draw(st.integers(0, total + 2))
    cut = TiktokenTokenizer(enc).truncate(long, n)
    assert long.startswith(cut)
    assert len(enc.encode_ordinary(cut)) <= n
    if total <= n:
        assert cut == long
