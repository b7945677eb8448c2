"""The frontmatter fast path gives what PyYAML's base loader gives, or leaves it to PyYAML."""

from __future__ import annotations

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.skills._simple_yaml import simple_mapping

_KEYS = st.sampled_from(["name", "description", "metadata", "allowed-tools", "x_y", "a", "A1"])
_PIECES = st.sampled_from(
    ["a", "Z", "1.10", " ", "  ", ":", ": ", "#", " #", "'", '"', "\\", "-", "(", ")", "[",
     "]", "{", "}", ",", "*", "&", "!", "|", ">", "%", "@", "`", "?", "\t", "é", "\u2028",
     "\x07", "yes", "~", "null", "Bash(git:*)"]
)  # fmt: skip
_VALUE = st.lists(_PIECES, max_size=6).map("".join)
_LINE = st.one_of(
    st.tuples(_KEYS, _VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.tuples(_KEYS, _VALUE).map(lambda kv: f"  {kv[0]}: {kv[1]}"),
    st.tuples(_KEYS, _VALUE).map(lambda kv: f"{kv[0]}: '{kv[1]}'"),
    st.tuples(_KEYS, _VALUE).map(lambda kv: f'{kv[0]}: "{kv[1]}"'),
    _KEYS.map(lambda key: f"{key}:"),
    _VALUE,
)
_TEXT = st.lists(_LINE, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=3000, deadline=None)
@given(_TEXT)
@example("name: pdf\ndescription: Read PDFs.\nmetadata:\n  version: '1.0'\n")
@example("metadata:\nname: x\n")
@example("allowed-tools: Bash(git:*) Read\n")
@example("name: a b   \ndescription: x: y\n")
@example("name: 'a b' \nlicense: x#y\n")
def test_the_fast_path_agrees_with_pyyaml(text: str) -> None:
    fast = simple_mapping(text)
    if fast is None:
        return
    assert fast == yaml.load(text, Loader=yaml.BaseLoader)


def test_the_published_frontmatters_take_the_fast_path() -> None:
    assert simple_mapping("name: internal-comms\ndescription: A set of resources.\n")
    assert simple_mapping("description: a: b\n") is None


def test_the_common_shapes_take_the_fast_path_with_pyyamls_result() -> None:
    """Plain and quoted values, spaces around them, a nested mapping, blank lines."""
    text = (
        "name: pdf\ndescription:   Read PDFs (and forms); use it for any .pdf file.  \n\n"
        "license: Apache-2.0\nmetadata:\n  author: 'bench'\n  version: \"1.0\"\n"
        "allowed-tools: Bash(git:*) Read\n"
    )
    fast = simple_mapping(text)
    assert fast is not None and fast == yaml.load(text, Loader=yaml.BaseLoader)
    for outside in (
        "key: a #b\n",
        "a: b\n#x\n",
        "key: a:\n",
        "key: a  b\n",
        "key: 'a''b'\n",
        "  nested: x\n",
        "key:x\n",
        'k: "a" b\n',
    ):
        assert simple_mapping(outside) is None, outside
