"""Manifest ids: unique, and sortable by the time they were made.

::

    from harness.manifests.ids import new_manifest_id

    first, second = new_manifest_id(), new_manifest_id()
    assert len(first) == 26 and first < second     # later ids sort after earlier ones

Design notes: an id is 128 bits in the ULID layout (a 48-bit Unix time in milliseconds, then
80 random bits from ``os.urandom``), written as 26 characters of Crockford base32, so the
string order is the time order. Within one process the ids are also strictly increasing:
an id made in the same millisecond as the previous one (or after the clock stepped back)
takes the previous id's time and its random part plus one. So two builds of one process
never share an id, however many run at once, and ids of different processes collide only if
80 random bits do.
"""

from __future__ import annotations

import base64
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


_FROM_RFC4648 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", _ALPHABET)


def _encode(value: int) -> str:
    """26 Crockford base32 characters for a 128-bit value (through the C base32 encoder: 160
    bits give 32 characters, the first 6 of which are always zero)."""
    text = base64.b32encode(value.to_bytes(20, "big")).decode("ascii")
    return text[6:].translate(_FROM_RFC4648)


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
