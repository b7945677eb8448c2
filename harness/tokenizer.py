"""Token counting behind one small protocol, so the assembler never depends on a vocabulary.

The default is a deterministic estimate (UTF-8 bytes / 4, rounded up) that needs no data files;
an exact BPE tokenizer (tiktoken) can be swapped in without touching the assembler. Every count
says whether it is an estimate, so reports never pass a guess off as a measurement.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Self, TypeAlias, runtime_checkable

import cachetools

from harness.errors import HarnessError

if TYPE_CHECKING:  # tiktoken is imported only when a TiktokenTokenizer is built (fast startup)
    import tiktoken

__all__ = ["ApproximateTokenizer", "TiktokenTokenizer", "Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """What the assembler needs from a tokenizer.

    ``count("")`` must be 0, and ``truncate(text, n)`` must return a prefix of ``text`` whose
    ``count`` is ``<= n`` without cutting a code point.
    """

    name: str
    estimated: bool

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


def _check_text(text: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")


def _check_max_tokens(max_tokens: int) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise TypeError(f"max_tokens must be an int, got {max_tokens!r}")
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")


def utf8_len(text: str) -> int:
    """UTF-8 length in bytes; O(1) for ASCII text (CPython keeps an is-ASCII flag).

    Lone surrogates (possible in a Python ``str``) count as the 3 bytes ``surrogatepass``
    gives them, so counting never raises.
    """
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def utf8_prefix(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 form has at most ``max_bytes`` bytes."""
    if max_bytes <= 0:
        return ""
    if text.isascii():
        return text[:max_bytes]
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    cut = max_bytes
    # Step back over continuation bytes (10xxxxxx) so no code point is split.
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")


class ApproximateTokenizer:
    """The default: ``ceil(utf8_bytes / bytes_per_token)``, every count marked estimated.

    Deterministic, data-free and additive over bytes, which lets the assembler work on byte
    lengths alone (the same heuristic as the engine's terminal executor).
    """

    estimated: bool = True
    bytes_per_token: int
    name: str

    __slots__ = ("bytes_per_token", "name")

    def __init__(self, bytes_per_token: int = 4) -> None:
        if isinstance(bytes_per_token, bool) or not isinstance(bytes_per_token, int):
            raise TypeError(f"bytes_per_token must be an int, got {bytes_per_token!r}")
        if bytes_per_token < 1:
            raise ValueError(f"bytes_per_token must be >= 1, got {bytes_per_token}")
        object.__setattr__(self, "bytes_per_token", bytes_per_token)
        object.__setattr__(self, "name", f"approximate(bytes/{bytes_per_token})")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ApproximateTokenizer is immutable; cannot set {name!r}")

    def count(self, text: str) -> int:
        _check_text(text)
        return -(-utf8_len(text) // self.bytes_per_token)

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix whose count is ``<= max_tokens``, never cutting a code point."""
        _check_text(text)
        _check_max_tokens(max_tokens)
        return utf8_prefix(text, max_tokens * self.bytes_per_token)

    def __repr__(self) -> str:
        return f"ApproximateTokenizer(bytes_per_token={self.bytes_per_token})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ApproximateTokenizer)
        return other.bytes_per_token == self.bytes_per_token

    def __hash__(self) -> int:
        return hash((type(self), self.bytes_per_token))

    # Immutable, so copies may share it, and pickling rebuilds it from its one parameter (the
    # default slot-by-slot restore would trip over the immutability guard).
    def __reduce__(self) -> tuple[type[ApproximateTokenizer], tuple[int]]:
        return (type(self), (self.bytes_per_token,))

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        return self


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


def _cache_weight(text: str) -> int:
    return len(text) + 64


def _entry_weight(entry: tuple[int, int]) -> int:
    return entry[1]


class TiktokenTokenizer:
    """Exact counts from a tiktoken BPE encoding, memoised in a bounded LRU cache.

    ``encoding`` is an encoding name (``tiktoken.get_encoding``; may need the network the first
    time), a path to a local ``<stem>.tiktoken`` rank file (read once here; no network, no copy
    written anywhere; the split pattern and special tokens come from the public encoding named
    by the stem), or a ``tiktoken.Encoding``. Special-token strings in text count as plain text.
    """

    estimated: bool = False

    def __init__(
        self,
        encoding: str | os.PathLike[str] | tiktoken.Encoding,
        *,
        cache_chars: int = 32 * 1024 * 1024,
    ) -> None:
        if cache_chars < 0:
            raise ValueError(f"cache_chars must be >= 0, got {cache_chars}")
        import tiktoken

        enc: tiktoken.Encoding
        if isinstance(encoding, tiktoken.Encoding):
            enc = encoding
        elif isinstance(encoding, os.PathLike):
            enc = _load_rank_file(Path(encoding))
        elif isinstance(encoding, str):
            if looks_like_path(encoding):
                enc = _load_rank_file(Path(encoding))
            else:
                try:
                    enc = tiktoken.get_encoding(encoding)
                except Exception as exc:
                    raise TokenizerLoadError(
                        f"cannot load tiktoken encoding {encoding!r}: {exc}. Pass a local "
                        "'<name>.tiktoken' rank file path or a tiktoken.Encoding to work offline."
                    ) from exc
        else:
            raise TypeError(
                "encoding must be an encoding name, a path to a .tiktoken file or a "
                f"tiktoken.Encoding, got {type(encoding).__name__}"
            )
        self.encoding = enc
        self.name = f"tiktoken:{enc.name}"
        self._encode = enc.encode_ordinary
        # Bounded by total characters held, so a few huge texts cannot pin unbounded memory.
        # Entries are (count, weight): cachetools weighs values, and the weight is the key's.
        self._cache: cachetools.LRUCache[str, tuple[int, int]] = cachetools.LRUCache(
            maxsize=cache_chars, getsizeof=_entry_weight
        )
        # Cuts made by truncate, keyed by (text, max_tokens), weighed and bounded the same way.
        self._cuts: cachetools.LRUCache[tuple[str, int], tuple[int, int]] = cachetools.LRUCache(
            maxsize=cache_chars, getsizeof=_entry_weight
        )
        self._cache_limit = cache_chars
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.encoding.name!r})"

    # The memo and its lock are process-local: a copy shares this tokenizer (counts never
    # change), and a pickle carries the encoding and rebuilds an empty memo.
    def __reduce__(
        self,
    ) -> tuple[
        Callable[[tiktoken.Encoding, int], TiktokenTokenizer], tuple[tiktoken.Encoding, int]
    ]:
        return (_rebuild_tiktoken, (self.encoding, self._cache_limit))

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        return self

    def _remember(self, text: str, n: int) -> None:
        weight = _cache_weight(text)
        if weight > self._cache_limit:
            return
        with self._lock:
            self._cache[text] = (n, weight)

    def count(self, text: str) -> int:
        if not text:
            _check_text(text)
            return 0
        try:
            with self._lock:
                return self._cache[text][0]
        except KeyError:
            pass
        n = len(self._encode(text))
        self._remember(text, n)
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        """A prefix of ``text`` with ``count <= max_tokens``, within a few tokens of it.

        Encodes ``text`` once, decodes a token prefix (dropping a code point split at the
        boundary) and verifies the candidate with one encode of the (shorter) prefix.
        """
        _check_text(text)
        _check_max_tokens(max_tokens)
        if not text:
            return text
        with self._lock:
            known = self._cache.get(text)
            cut = self._cuts.get((text, max_tokens))
        if known is not None and known[0] <= max_tokens:
            return text
        if cut is not None:  # the same cut as before: no encode (a layer re-assembled)
            return text[: cut[0]]
        prefix = self._truncate_uncached(text, max_tokens)
        weight = _cache_weight(text)
        if weight <= self._cache_limit:
            with self._lock:
                self._cuts[(text, max_tokens)] = (len(prefix), weight)
        return prefix

    def _truncate_uncached(self, text: str, max_tokens: int) -> str:
        tokens = self._encode(text)
        self._remember(text, len(tokens))
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens
        for _ in range(8):
            candidate = self._decode_prefix(tokens, keep)
            if not text.startswith(candidate):
                break  # tiktoken replaced lone surrogates: the fast path cannot map back
            n = self.count(candidate)
            if n <= max_tokens:
                return candidate
            keep = max(0, keep - (n - max_tokens))
        return self._truncate_slow(text, max_tokens)

    def _decode_prefix(self, tokens: list[int], keep: int) -> str:
        """Text of the first ``keep`` tokens, minus a partial code point at the end."""
        if keep <= 0:
            return ""
        data = self.encoding.decode_bytes(tokens[:keep])
        # A token boundary can fall inside a multi-byte character: drop the incomplete tail.
        return data.decode("utf-8", "ignore")

    def _truncate_slow(self, text: str, max_tokens: int) -> str:
        """Binary search over code points; only for texts the fast path cannot map back."""
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(text[:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


_Rebuild: TypeAlias = "Callable[[tiktoken.Encoding, int], TiktokenTokenizer]"


def _rebuild_tiktoken(encoding: tiktoken.Encoding, cache_chars: int) -> TiktokenTokenizer:
    return TiktokenTokenizer(encoding, cache_chars=cache_chars)
