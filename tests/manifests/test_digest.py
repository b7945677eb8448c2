"""The prompt digest a manifest records is the sha256 of the whole text as UTF-8, however the
hashing is split up (texts of a few KiB are hashed in pieces, keeping the interpreter lock)."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from harness.prompt_assembler._render import sha256

_SIZES = st.sampled_from([0, 1, 2046, 2047, 2048, 4094, 4095, 4096, 9000, 65536, 65537, 70000])


@given(_SIZES, st.text(min_size=1, max_size=3), st.text(max_size=50))
def test_the_digest_is_hashlibs_digest_of_the_whole_text(size: int, filler: str, tail: str) -> None:
    text = (filler * size)[:size] + tail
    expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert sha256(text) == expected


def test_lone_surrogates_are_hashed_as_they_are_encoded() -> None:
    text = "a" * 3000 + "\ud800" + "b" * 3000
    assert sha256(text) == hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
