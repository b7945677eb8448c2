"""Token counting behind one small protocol, so the assembler never depends on a vocabulary.

The default is a deterministic estimate (UTF-8 bytes / 4, rounded up) that needs no data files;
an exact BPE tokenizer (tiktoken) can be swapped in without touching the assembler. Every count
says whether it is an estimate, so reports never pass a guess off as a measurement::

    from harness._tokenizer import ApproximateTokenizer

    assert ApproximateTokenizer().count("hello world") == 3  # ceil(11 bytes / 4)
"""

from __future__ import annotations

import os
import re
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeAlias, runtime_checkable

import cachetools

from harness._encodings import (
    SPLITTABLE_PATTERNS,
    TokenizerLoadError,
    load_encoding,
    looks_like_path,
)
from harness.errors import ArgumentError, ArgumentTypeError

if TYPE_CHECKING:  # tiktoken is imported only when a TiktokenTokenizer is built (fast startup)
    import tiktoken

__all__ = [
    "ApproximateTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "TokenizerLoadError",
    "TokenizerSpec",
    "looks_like_path",
    "parse_tokenizer_spec",
    "resolve_tokenizer_spec",
]


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
        raise ArgumentTypeError(f"text must be a str, got {type(text).__name__}")


def _check_max_tokens(max_tokens: int) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise ArgumentTypeError(f"max_tokens must be an int, got {max_tokens!r}")
    if max_tokens < 0:
        raise ArgumentError(f"max_tokens must be >= 0, got {max_tokens}")


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
            raise ArgumentTypeError(f"bytes_per_token must be an int, got {bytes_per_token!r}")
        if bytes_per_token < 1:
            raise ArgumentError(f"bytes_per_token must be >= 1, got {bytes_per_token}")
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


_DECODE_SLICE = 16_384
_NO_SPECIAL: frozenset[str] = frozenset()
_PIECE_CHARS = 65_536
_BOUNDARY_WINDOW = 4_096
# Where every split pattern of SPLITTABLE_PATTERNS splits text anyway: just after a letter
# (ASCII, or a CJK ideograph of Unicode 1.1, so no Unicode-version skew between Python and
# tiktoken can matter) and before an ASCII character that is no letter and no apostrophe, or
# an ideographic comma or full stop. No match of those patterns holds a letter and such a
# character after it (letters are followed only by letters, marks or an apostrophe
# contraction), and none looks behind, so the ids of the two sides are the ids of the whole.
_BOUNDARY = re.compile(
    "[A-Za-z\u4e00-\u9fa5](?=[\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f\u3001\u3002\uff0c])"
)


def _pieces(text: str, size: int | None) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive pieces of ``text`` of about ``size`` characters.

    Cut only at a ``_BOUNDARY``, searched for in windows so that a text without one (a long
    run of digits, say) is scanned in short steps and simply stays in one larger piece.
    """
    start, length = 0, len(text)
    while size is not None and length - start > size:
        probe, end = start + size, length
        while probe < length:
            found = _BOUNDARY.search(text, probe, min(length, probe + _BOUNDARY_WINDOW + 1))
            if found is not None:
                end = found.end()
                break
            probe += _BOUNDARY_WINDOW
        yield start, end
        start = end
    if start < length:
        yield start, length


# The only two reads of tiktoken internals (it has no public call for either). Each is one
# function, tested to still find its attribute (tests/tokenizer), and pyproject.toml bounds
# tiktoken's version from above; without the attribute the tokenizer stays exact, only slower
# (a Python list of ids, or long texts encoded whole).


def _buffer_encoder(encoding: tiktoken.Encoding) -> Callable[[str, frozenset[str]], Any] | None:
    """``encoding._core_bpe.encode_to_tiktoken_buffer`` (what ``Encoding.encode_to_numpy``
    calls), or None."""
    found = getattr(getattr(encoding, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    return found if callable(found) else None


def _split_pattern(encoding: tiktoken.Encoding) -> str | None:
    """``encoding._pat_str``, the encoding's split pattern, or None."""
    found = getattr(encoding, "_pat_str", None)
    return found if isinstance(found, str) else None


def _ordinary_ids(encoding: tiktoken.Encoding) -> Callable[[str], Sequence[int]]:
    """``encoding.encode_ordinary`` without the Python list of ids, where tiktoken allows it.

    tiktoken releases the GIL while it encodes, but building a list of a million ints holds
    it for tens of milliseconds: an event loop beside a worker thread that counts a few MB
    stalls that long. ``encode_to_tiktoken_buffer`` returns the ids in a native buffer instead
    (an O(1) object). With no special token allowed it treats every special-token string as
    plain text, exactly as ``encode_ordinary`` does (``Encoding.encode_to_numpy`` calls it the
    same way). The buffer misreports its shape (its byte length as its item count), so it is
    viewed through its byte length only (``cast("B").cast("I")``: ``nbytes // 4`` ids) and is
    never iterated as it presents itself. An ``Encoding`` subclass that overrides
    ``encode_ordinary``, or a tiktoken without the buffer, keeps ``encode_ordinary``.
    """
    import tiktoken

    to_buffer = _buffer_encoder(encoding)
    if (
        to_buffer is None
        or type(encoding).encode_ordinary is not tiktoken.Encoding.encode_ordinary
        or struct.calcsize("I") != 4
    ):
        return encoding.encode_ordinary

    def ids(text: str) -> Sequence[int]:
        try:
            buffer = to_buffer(text, _NO_SPECIAL)
        except UnicodeEncodeError:  # lone surrogates: the same repair as encode_ordinary's
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            buffer = to_buffer(text, _NO_SPECIAL)
        return memoryview(buffer).cast("B").cast("I")

    return ids


def _as_list(ids: Sequence[int]) -> list[int]:
    return ids.tolist() if isinstance(ids, memoryview) else list(ids)


def _cache_weight(text: str) -> int:
    return len(text) + 64


def _entry_weight(entry: tuple[int, int]) -> int:
    return entry[1]


class TiktokenTokenizer:
    """Exact counts from a tiktoken BPE encoding, memoised in a bounded LRU cache.

    Long texts are encoded in pieces of about 64 K characters, cut where the encoding's split
    pattern splits anyway (for the public patterns; any other pattern is encoded whole), so
    the GIL is held only briefly at a time and a truncation encodes only as far as it keeps.

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
            raise ArgumentError(f"cache_chars must be >= 0, got {cache_chars}")
        enc = load_encoding(encoding)
        self.encoding = enc
        self.name = f"tiktoken:{enc.name}"
        self._ids = _ordinary_ids(enc)
        splittable = _split_pattern(enc) in SPLITTABLE_PATTERNS
        self._piece_chars: int | None = _PIECE_CHARS if splittable else None
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
        ids = self._ids
        n = sum(len(ids(text[a:b])) for a, b in _pieces(text, self._piece_chars))
        self._remember(text, n)
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        """A prefix of ``text`` with ``count <= max_tokens``, within a few tokens of it.

        Encodes ``text`` piece by piece (into buffers, not lists) up to the piece where the
        budget runs out, turns only that piece's kept ids into a list, decodes them (dropping a
        code point split at the boundary) and verifies the candidate with one encode of it.
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
        left = max_tokens
        for start, end in _pieces(text, self._piece_chars):
            piece = text[start:end]  # the text itself (no copy) when it is one piece
            tokens = self._ids(piece)
            if len(tokens) > left:  # the cut falls in this piece; what follows is not encoded
                return text[: start + len(self._cut(piece, tokens, left))]
            left -= len(tokens)
        self._remember(text, max_tokens - left)
        return text

    def _cut(self, text: str, tokens: Sequence[int], max_tokens: int) -> str:
        """A prefix of ``text`` (whose ids are ``tokens``) with at most ``max_tokens`` ids."""
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

    def _decode_prefix(self, tokens: Sequence[int], keep: int) -> str:
        """Text of the first ``keep`` tokens, minus a partial code point at the end.

        Decoded in slices of ``_DECODE_SLICE`` ids: each list is built (holding the GIL) in a
        fraction of a millisecond, and tiktoken decodes with the GIL released.
        """
        if keep <= 0:
            return ""
        decode = self.encoding.decode_bytes
        data = b"".join(
            decode(_as_list(tokens[start : min(keep, start + _DECODE_SLICE)]))
            for start in range(0, keep, _DECODE_SLICE)
        )
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


_SPEC = re.compile(r"approximate(?:\(bytes/([1-9][0-9]{0,5})\))?|tiktoken:(.+)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class TokenizerSpec:
    """A tokenizer named in text (a config file, ``--tokenizer``, a recorded manifest).

    ``approximate`` (or ``approximate(bytes/N)``, as ``ApproximateTokenizer.name`` reads), or
    ``tiktoken:NAME_OR_PATH`` with an encoding name or a ``.tiktoken`` rank file in
    ``reference``; ``str(spec)`` is the text again. Parse one with :func:`parse_tokenizer_spec`.
    """

    kind: Literal["approximate", "tiktoken"]
    bytes_per_token: int = 4
    reference: str = ""

    def __str__(self) -> str:
        if self.kind == "tiktoken":
            return f"tiktoken:{self.reference}"
        return (
            "approximate"
            if self.bytes_per_token == 4
            else f"approximate(bytes/{self.bytes_per_token})"
        )

    @property
    def rank_file(self) -> Path | None:
        """The rank file a ``tiktoken:`` spec names, None for an encoding name."""
        if self.kind == "tiktoken" and looks_like_path(self.reference):
            return Path(self.reference)
        return None

    def build(self) -> Tokenizer:
        """The tokenizer (tiktoken is imported only for a ``tiktoken:`` spec)."""
        if self.kind == "tiktoken":
            return TiktokenTokenizer(self.reference)
        return ApproximateTokenizer(self.bytes_per_token)


def parse_tokenizer_spec(spec: str) -> TokenizerSpec:
    """The :class:`TokenizerSpec` ``spec`` names; ``ArgumentError`` (a ``ValueError``) if none.

    ::

        assert parse_tokenizer_spec("tiktoken:cl100k_base").reference == "cl100k_base"
    """
    found = _SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if found is None:
        raise ArgumentError(
            f"{spec!r} is not a tokenizer: use 'approximate' or 'tiktoken:NAME_OR_PATH' "
            "(e.g. 'tiktoken:cl100k_base')"
        )
    if found.group(2) is not None:
        return TokenizerSpec("tiktoken", reference=found.group(2))
    return TokenizerSpec("approximate", int(found.group(1) or 4))


def resolve_tokenizer_spec(spec: str, base: str | os.PathLike[str]) -> str:
    """``spec`` with a relative rank-file path made relative to ``base`` (the directory of
    the config file that names it); any other text is returned as it is."""
    try:
        parsed = parse_tokenizer_spec(spec)
    except ArgumentError:
        return spec  # refused, with its message, where it is validated
    file = parsed.rank_file
    if file is None or file.is_absolute():
        return spec
    return str(TokenizerSpec("tiktoken", reference=str(Path(base) / file)))
