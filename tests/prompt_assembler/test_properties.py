"""Property tests of contract section 2, invariants 1-4, over random layers.

Random layers mix ASCII, CJK, emoji (ZWJ sequences, flags), combining characters, special-token
strings and attribution markup fragments; they run with the approximate tokenizer, the exact
cl100k_base tokenizer, and a deliberately non-additive, non-monotone tokenizer, because the
invariants must hold for ANY tokenizer.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import (
    DEFAULT_BUDGETS,
    LAYERS,
    ApproximateTokenizer,
    AssembledPrompt,
    Strategy,
    TiktokenTokenizer,
    Tokenizer,
    Unit,
    assemble,
)
from harness.prompt_assembler import LAYER_SEPARATOR, TRUNCATION_MARKER, UNIT_SEPARATOR
from harness.prompt_assembler._render import render

PIECES = st.one_of(
    st.text(alphabet="abcxyz ABC.,;:-_", min_size=1, max_size=8),
    st.characters(codec="utf-8"),
    st.sampled_from(["你好", "世界", "日本語", "한국어", "🎉", "👩\u200d👩\u200d👧", "🇫🇷🇯🇵", "🚫"]),
    st.sampled_from(["e\u0301", "\u0301", "a\u0308\u0323", "\u200d", "\ufeff"]),
    st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "\r\n"]),
    st.sampled_from(
        [
            "<context ",
            '<context path="x">',
            "</context>",
            "</CONTEXT>",
            "<",
            "/",
            "context",
            ">",
            "\\",
            '"',
            "<|endoftext|>",
            "[… truncated …]",
        ]
    ),
)
TEXT = st.lists(PIECES, max_size=30).map("".join)
SOURCES = st.one_of(
    st.none(),
    st.sampled_from(["AGENTS.md", "pkg/api/AGENTS.md", ".AGENTS/overview.md", 'we"ird<path>']),
)


@st.composite
def layer_values(draw: st.DrawFn, name: str) -> object:
    kind = draw(st.sampled_from(["missing", "str", "unit", "units", "units", "units"]))
    if kind == "missing":
        return None
    if kind == "str":
        return draw(TEXT)
    if kind == "unit":
        return Unit(id=f"{name}-only", text=draw(TEXT), source=draw(SOURCES))
    count = draw(st.integers(0, 6))
    return [Unit(id=f"{name}-{i}", text=draw(TEXT), source=draw(SOURCES)) for i in range(count)]


@st.composite
def assemblies(draw: st.DrawFn) -> dict[str, Any]:
    layers = {}
    for name in LAYERS:
        value = draw(layer_values(name))
        if value is not None:
            layers[name] = value
    budgets = {
        name: draw(st.integers(0, 120))
        for name in LAYERS
        if draw(st.booleans())  # partial: the rest come from DEFAULT_BUDGETS
    }
    strategies = {
        name: draw(st.sampled_from([*Strategy, "drop_whole_units", "truncate_tail"]))
        for name in LAYERS
        if draw(st.booleans())
    }
    return {"layers": layers, "budgets": budgets, "strategies": strategies}


class Lumpy:
    """Non-additive AND non-monotone: appending text can lower the count."""

    name = "lumpy"
    estimated = True

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(text) // 3 + len(re.findall(r"\w+", text)) + (3 - text.count("e") % 3)

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens < 0:
            raise ValueError("max_tokens must be >= 0")
        for end in range(len(text), -1, -1):
            if self.count(text[:end]) <= max_tokens:
                return text[:end]
        return ""


def unit_list(value: object, name: str) -> list[Unit]:
    if value is None:
        return []
    if isinstance(value, str):
        return [Unit(id=name, text=value)]
    if isinstance(value, Unit):
        return [value]
    assert isinstance(value, list)
    return value


def check_invariants(case: dict[str, Any], tok: Tokenizer) -> AssembledPrompt:
    prompt = assemble(
        case["layers"], budgets=case["budgets"], strategies=case["strategies"], tokenizer=tok
    )

    # Invariant 1: per layer, tokens == count(text) <= budget.
    for report in prompt.layers:
        expected_budget = case["budgets"].get(report.name, DEFAULT_BUDGETS[report.name])
        assert report.budget == expected_budget
        assert report.tokens == tok.count(report.text) <= report.budget

    # Invariant 2: prompt tokens are counted on the prompt; estimated follows the tokenizer.
    assert prompt.tokens == tok.count(prompt.text)
    assert prompt.estimated is tok.estimated
    assert all(report.estimated is tok.estimated for report in prompt.layers)

    # The prompt is the non-empty layer texts in LAYERS order, joined by the separator.
    assert [r.name for r in prompt.layers] == list(LAYERS)
    assert prompt.text == LAYER_SEPARATOR.join(r.text for r in prompt.layers if r.text)
    assert prompt.digest == hashlib.sha256(prompt.text.encode()).hexdigest()

    for report in prompt.layers:
        units = unit_list(case["layers"].get(report.name), report.name)
        ids = [unit.id for unit in units]
        # Nothing is dropped silently: kept and dropped partition the units, in input order.
        assert sorted(report.kept + report.dropped) == sorted(ids)
        assert [i for i in ids if i in report.kept] == list(report.kept)
        assert [i for i in ids if i in report.dropped] == list(report.dropped)
        if report.dropped or report.truncated:
            assert report.notes
        kept = [unit for unit in units if unit.id in report.kept]
        if report.strategy is Strategy.DROP_WHOLE_UNITS:
            assert report.kept == tuple(ids[len(ids) - len(report.kept) :])  # a suffix
            assert not report.truncated
        elif report.strategy is Strategy.TRUNCATE_TAIL:
            assert report.kept == tuple(ids[: len(report.kept)])  # a prefix
            if report.truncated:
                assert report.kept
                assert report.text.endswith((TRUNCATION_MARKER, TRUNCATION_MARKER + "\n</context>"))
        elif report.strategy is Strategy.FIT_WHOLE_UNITS:
            assert not report.truncated  # whole units only, any subset (its own tests)
            assert report.text == UNIT_SEPARATOR.join(render(unit) for unit in kept)
        else:
            assert report.kept in ((), tuple(ids))
            assert not report.truncated
        # Attribution cannot be forged: one opening and one closing per kept sourced unit.
        sourced = sum(1 for unit in kept if unit.source is not None)
        assert report.text.count("<context ") == sourced
        assert report.text.count("</context>") == sourced
        assert report.text.lower().count("<context") == sourced
        assert report.text.lower().count("</context") == sourced

    # Invariant 4: the manifest holds everything it must, and is JSON.
    manifest = prompt.manifest()
    assert json.loads(json.dumps(manifest)) == manifest
    assert (manifest["digest"], manifest["tokens"], manifest["estimated"]) == (
        prompt.digest,
        prompt.tokens,
        prompt.estimated,
    )
    assert manifest["tokenizer"] == tok.name
    for entry, report in zip(manifest["layers"], prompt.layers, strict=True):
        assert entry["name"] == report.name
        assert entry["strategy"] == report.strategy.value
        assert (entry["budget"], entry["tokens"], entry["truncated"]) == (
            report.budget,
            report.tokens,
            report.truncated,
        )
        assert (entry["kept"], entry["dropped"]) == (list(report.kept), list(report.dropped))
        by_id = {u.id: u for u in unit_list(case["layers"].get(report.name), report.name)}
        assert [unit["id"] for unit in entry["units"]] == list(report.kept)
        for unit in entry["units"]:
            original = by_id[unit["id"]]
            assert unit["source"] == original.source
            assert unit["sha256"] == hashlib.sha256(original.text.encode()).hexdigest()
            assert isinstance(unit["tokens"], int) and unit["tokens"] >= 0

    # Invariant 3: same inputs, any mapping order -> byte-identical text, digest and manifest.
    shuffled = list(case["layers"].items())
    random.Random(len(prompt.text)).shuffle(shuffled)
    again = assemble(
        dict(reversed(shuffled)),
        budgets=dict(reversed(list(case["budgets"].items()))),
        strategies=case["strategies"],
        tokenizer=tok,
    )
    assert again.text == prompt.text
    assert again.digest == prompt.digest
    assert json.dumps(again.manifest()) == json.dumps(manifest)
    return prompt


@given(case=assemblies(), bpt=st.sampled_from([1, 4]))
@settings(max_examples=200, deadline=None)
def test_invariants_approximate(case: dict[str, Any], bpt: int) -> None:
    check_invariants(case, ApproximateTokenizer(bpt))


@given(case=assemblies())
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_invariants_exact_cl100k(cl100k: TiktokenTokenizer, case: dict[str, Any]) -> None:
    check_invariants(case, cl100k)


@given(case=assemblies())
@settings(max_examples=80, deadline=None)
def test_invariants_non_additive_non_monotone_tokenizer(case: dict[str, Any]) -> None:
    check_invariants(case, Lumpy())


@given(units=st.lists(st.tuples(TEXT, SOURCES), max_size=8), budget=st.integers(0, 150))
@settings(max_examples=200, deadline=None)
def test_approximate_drop_keeps_the_longest_fitting_suffix(
    units: list[tuple[str, str | None]], budget: int
) -> None:
    tok = ApproximateTokenizer(1)
    layer = [Unit(id=str(i), text=text, source=source) for i, (text, source) in enumerate(units)]
    report = assemble({"task_state": layer}, budgets={"task_state": budget}, tokenizer=tok).layer(
        "task_state"
    )
    h = len(report.dropped)
    if h:
        # Keeping one more unit from the head would not have fit.
        bigger = assemble(
            {"task_state": layer[h - 1 :]}, budgets={"task_state": 10**9}, tokenizer=tok
        ).layer("task_state")
        assert bigger.tokens > budget


@given(units=st.lists(st.tuples(TEXT, SOURCES), min_size=1, max_size=5), budget=st.integers(0, 150))
@settings(max_examples=200, deadline=None)
def test_approximate_truncate_tail_matches_the_general_path(
    units: list[tuple[str, str | None]], budget: int
) -> None:
    """The byte path (exact) and the general path agree when counts are additive bytes."""

    class Opaque:
        name = "opaque"
        estimated = True
        inner = ApproximateTokenizer(1)

        def count(self, text: str) -> int:
            return self.inner.count(text)

        def truncate(self, text: str, max_tokens: int) -> str:
            return self.inner.truncate(text, max_tokens)

    layer = [Unit(id=str(i), text=text, source=source) for i, (text, source) in enumerate(units)]
    for strategy in Strategy:
        kwargs: dict[str, Any] = {
            "budgets": {"project_context": budget},
            "strategies": {"project_context": strategy},
        }
        fast = assemble({"project_context": layer}, tokenizer=ApproximateTokenizer(1), **kwargs)
        general = assemble({"project_context": layer}, tokenizer=Opaque(), **kwargs)
        assert fast.text == general.text, strategy
        assert fast.layers == general.layers or all(
            (a.kept, a.dropped, a.truncated, a.tokens) == (b.kept, b.dropped, b.truncated, b.tokens)
            for a, b in zip(fast.layers, general.layers, strict=True)
        )


class Framed:
    """Exact word count plus a fixed per-text overhead: monotone but sub-additive (a joined
    text counts less than its parts), as chat tokenizers with per-message framing are."""

    name = "framed"
    estimated = False

    def __init__(self, overhead: int) -> None:
        self.overhead = overhead

    def count(self, text: str) -> int:
        return len(text.split()) + self.overhead if text else 0

    def truncate(self, text: str, max_tokens: int) -> str:
        while text and self.count(text) > max_tokens:
            text = text[:-1]
        return text


class DistinctWords:
    """Counts distinct words: repeated text is free, so the sum of parts overestimates wildly."""

    name = "distinct-words"
    estimated = True

    def count(self, text: str) -> int:
        return len(set(text.split()))

    def truncate(self, text: str, max_tokens: int) -> str:
        while text and self.count(text) > max_tokens:
            text = text[:-1]
        return text


WORDS = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "x"]), max_size=6).map(
    " ".join
)


@given(
    texts=st.lists(WORDS, min_size=1, max_size=12),
    budget=st.integers(0, 80),
    tokenizer=st.sampled_from([Framed(8), Framed(30), DistinctWords()]),
)
@settings(max_examples=300, deadline=None)
def test_drop_whole_units_discards_nothing_that_would_fit(
    texts: list[str], budget: int, tokenizer: Tokenizer
) -> None:
    """'Discarded from the head until the rest fits': never one unit more, however far the sum
    of per-unit counts overestimates the joined text."""
    units = [Unit(id=f"u{i}", text=text) for i, text in enumerate(texts)]
    layer = assemble(
        {"business_rules": units}, budgets={"business_rules": budget}, tokenizer=tokenizer
    ).layer("business_rules")
    assert layer.tokens == tokenizer.count(layer.text) <= budget
    h = len(layer.dropped)
    assert layer.dropped == tuple(u.id for u in units[:h])
    if h:
        one_more = assemble(
            {"business_rules": units[h - 1 :]},
            budgets={"business_rules": 10**9},
            tokenizer=tokenizer,
        ).layer("business_rules")
        assert tokenizer.count(one_more.text) > budget


def test_drop_whole_units_keeps_a_layer_that_fits_whole_under_a_sub_additive_count() -> None:
    units = [Unit(id=f"r{i}", text="alpha beta gamma delta") for i in range(20)]
    framed = Framed(30)
    need = framed.count("\n\n".join(u.text for u in units))
    layer = assemble(
        {"business_rules": units}, budgets={"business_rules": need}, tokenizer=framed
    ).layer("business_rules")
    assert (layer.dropped, layer.tokens, layer.notes) == ((), need, ())


def test_a_tokenizer_that_counts_the_empty_string_is_refused() -> None:
    class WithBos:
        name = "with-bos"
        estimated = False

        def count(self, text: str) -> int:
            return len(text) + 1

        def truncate(self, text: str, max_tokens: int) -> str:
            return text[: max(max_tokens - 1, 0)]

    try:
        assemble({"identity": "hello"}, tokenizer=WithBos())
    except ValueError as exc:
        assert "'with-bos' counts the empty string as 1;" in str(exc)
    else:
        raise AssertionError("a tokenizer with count('') == 1 was accepted")
