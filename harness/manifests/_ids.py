"""Manifest ids: unique, and sortable by the time they were made.

::

    from harness.manifests._ids import new_manifest_id

    first, second = new_manifest_id(), new_manifest_id()
    assert len(first) == 26 and first < second     # later ids sort after earlier ones
"""

from __future__ import annotations

import os
import re
import threading
import time

__all__ = ["is_manifest_id", "new_manifest_id"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32: no I, L, O, U
_RANDOM_BITS = 80
_LOCK = threading.Lock()
_last = 0  # the previous id's 128-bit value (time << 80 | random)
_PATTERN = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")


_PAIRS = tuple(first + second for first in _ALPHABET for second in _ALPHABET)
"""Every 10-bit value as its two characters: an id is 13 lookups."""
_SHIFTS = tuple(range(120, -1, -10))  # 13 chunks of 10 bits: 130 bits, the top 2 always 0


def _encode(value: int) -> str:
    """26 Crockford base32 characters for a 128-bit value, most significant first."""
    pairs = _PAIRS
    return "".join([pairs[(value >> shift) & 1023] for shift in _SHIFTS])


def new_manifest_id() -> str:
    """A new id: 26 characters, later ids sort after earlier ones (see the module notes)."""
    global _last
    millis = time.time_ns() // 1_000_000
    random = int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")
    with _LOCK:
        value = (millis << _RANDOM_BITS) | random
        if value <= _last:
            value = _last + 1
        _last = value
    return _encode(value)


def is_manifest_id(text: str) -> bool:
    """True when ``text`` has the form of a manifest id (26 Crockford base32 characters)."""
    return _PATTERN.fullmatch(text) is not None
