"""display_path is total and unambiguous: every ``str`` (lone surrogates included, not only
the ``surrogateescape`` bytes U+DC80-U+DCFF) shows as UTF-8 without control characters,
and two different paths never show alike."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from harness.workspace import display_path

# Every code point, surrogates included (hypothesis leaves them out unless asked).
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
TRICKY = st.text(st.sampled_from(["\\", "u", "x", "d", "8", "0", "f", "\ud800", "\udc80", "\x85"]))


def test_lone_surrogates_outside_the_escaped_bytes_are_shown() -> None:
    assert display_path("a\ud800b") == "a\\ud800b"
    assert display_path("\udc7f/\udfff") == "\\udc7f/\\udfff"
    assert display_path("\udcff") == "\\xff"  # an undecodable byte, as before
    assert display_path("\\ud800") == "\\\\ud800"  # a literal backslash stays distinguishable


@given(ANY_TEXT)
def test_every_str_has_a_printable_utf8_display(rel: str) -> None:
    shown = display_path(rel)
    shown.encode("utf-8")  # never raises: no surrogate is left
    assert not any(unicodedata.category(c) == "Cc" for c in shown)  # no control character


@given(st.one_of(ANY_TEXT, TRICKY), st.one_of(ANY_TEXT, TRICKY))
def test_different_paths_never_show_alike(a: str, b: str) -> None:
    if a != b:
        assert display_path(a) != display_path(b)
