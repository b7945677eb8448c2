"""The strategies' shortcuts: each gives what the plain way would, and skips the work it says.

``fits_whole`` answers "does this text fit?" from a tiktoken truncation (encoding about the
budget's worth of text) instead of a count of the whole; the byte path of
``drop_whole_units`` measures bare texts first and renders only when a unit needs it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import ApproximateTokenizer, TiktokenTokenizer, Unit, assemble
from harness.prompt_assembler import TRUNCATION_MARKER
from harness.prompt_assembler.strategies.layer import fits_whole


class Recording(TiktokenTokenizer):
    """cl100k, recording the length of every text it encodes (its counts are the same)."""

    def __init__(self, inner: TiktokenTokenizer) -> None:
        super().__init__(inner.encoding)
        self.encoded: list[int] = []
        ids = self._ids

        def recorded(text: str) -> Sequence[int]:
            self.encoded.append(len(text))
            return ids(text)

        self._ids = recorded


class Shy:
    """Exact counts, but a truncation that never keeps a whole text (which the protocol
    allows): only a count can say such a text fits."""

    name = "shy"
    estimated = False

    def __init__(self, inner: TiktokenTokenizer) -> None:
        self.inner = inner

    def count(self, text: str) -> int:
        return self.inner.count(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate(text, max_tokens)[:-1]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(st.sampled_from(["ledger ", "请勿 ", "🚫", "x", "\n", "2026 "]), max_size=80))
def test_fits_whole_is_count_within_budget(cl100k: TiktokenTokenizer, words: list[str]) -> None:
    text = "".join(words)
    count = cl100k.count(text)
    for budget in {0, max(count - 1, 0), count, count + 1}:
        fresh = TiktokenTokenizer(cl100k.encoding)
        assert fits_whole(fresh, text, budget) == (count <= budget)
        assert fits_whole(Shy(fresh), text, budget) == (count <= budget)


def test_a_long_layer_over_its_budget_is_never_encoded_whole(cl100k: TiktokenTokenizer) -> None:
    text = "The billing service reconciles invoices nightly; 请勿 edit ledgers. " * 20_000
    tok = Recording(cl100k)
    layer = assemble(
        {"project_context": [Unit("overview", text, source="overview.md")]},
        strategies={"project_context": "truncate_tail"},
        budgets={"project_context": 4000},
        tokenizer=tok,
    ).layer("project_context")
    assert layer.truncated and layer.tokens <= 4000 and TRUNCATION_MARKER in layer.text
    assert cl100k.count(layer.text) == layer.tokens
    assert sum(tok.encoded) < len(text) // 4  # pieces near the cut only, never the whole text


def test_a_layer_that_fits_only_without_the_marker_is_kept_whole(
    cl100k: TiktokenTokenizer,
) -> None:
    # Over the budget less the marker's room, within the budget: no cut, no marker.
    text = "ledger entries stay immutable. " * 50
    budget = cl100k.count(text)
    for tok in (TiktokenTokenizer(cl100k.encoding), Shy(TiktokenTokenizer(cl100k.encoding))):
        layer = assemble(
            {"project_context": text},
            strategies={"project_context": "truncate_tail"},
            budgets={"project_context": budget},
            tokenizer=tok,
        ).layer("project_context")
        assert (layer.text, layer.truncated, layer.tokens) == (text, False, budget)


class Opaque:
    """The same counts as ``inner`` behind an unknown type: the general (verified) path."""

    def __init__(self, inner: ApproximateTokenizer) -> None:
        self.inner, self.name, self.estimated = inner, f"opaque({inner.name})", True

    def count(self, text: str) -> int:
        return self.inner.count(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate(text, max_tokens)


TEXTS = st.lists(
    st.sampled_from(["rule", " ", "€", "<", "</context>", "<untrusted-data>", "<b>", "x" * 30]),
    max_size=8,
).map("".join)
UNITS = st.lists(
    st.tuples(TEXTS, st.sampled_from([None, "a.md"]), st.sampled_from(["trusted", "untrusted"])),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(units=UNITS, plain=st.booleans(), budget=st.integers(0, 200))
@pytest.mark.parametrize("strategy", ["drop_whole_units", "fit_whole_units"])
def test_bare_texts_first_gives_what_rendering_gives(
    strategy: str, units: list[tuple[str, str | None, str]], plain: bool, budget: int
) -> None:
    layer = [
        Unit(f"u{i}", text, None if plain else source, trust="trusted" if plain else trust)
        for i, (text, source, trust) in enumerate(units)
    ]
    fast, general = (
        assemble(
            {"business_rules": layer},
            budgets={"business_rules": budget},
            strategies={"business_rules": strategy},
            tokenizer=tok,
        ).layer("business_rules")
        for tok in (ApproximateTokenizer(1), Opaque(ApproximateTokenizer(1)))
    )
    assert (fast.text, fast.kept, fast.dropped, fast.tokens) == (
        general.text,
        general.kept,
        general.dropped,
        general.tokens,
    )
    kept = [u for u in layer if u.id in fast.kept]  # forged tags never survive neutralising
    assert fast.text.count("</context>") == sum(
        u.source is not None for u in kept if u.trust == "trusted"
    )
    assert fast.text.count("</untrusted-data>") == sum(u.trust == "untrusted" for u in kept)
