"""Manifest ids: unique, and sortable by the time they were made.

::

    from harness.manifests._ids import new_manifest_id

    first, second = new_manifest_id(), new_manifest_id()
    assert len(first) == 26 and first < second     # later ids sort after earlier ones
"""

from __future__ import annotations

import os
import random
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
    """A new id: 26 characters, later ids sort after earlier ones
    (see docs/architecture/stores.md)."""
    global _last
    millis = time.time_ns() // 1_000_000
    # Not os.urandom: it lets other threads take the interpreter lock, and the event loop
    # then waits for it to come back (milliseconds under load, for every recorded build).
    # The ids need to be unique, not secret; ``random`` is seeded from the OS and reseeded
    # in a forked child, so two processes never share a sequence.
    bits = random.getrandbits(_RANDOM_BITS)
    with _LOCK:
        value = (millis << _RANDOM_BITS) | bits
        if value <= _last:
            value = _last + 1
        _last = value
    return _encode(value)


def _forget_last() -> None:
    """In a forked child: the parent's last id is not this process's (both processes would
    otherwise step from the same value within one millisecond)."""
    global _last
    _last = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_last)


def is_manifest_id(text: str) -> bool:
    """True when ``text`` has the form of a manifest id (26 Crockford base32 characters)."""
    return _PATTERN.fullmatch(text) is not None
