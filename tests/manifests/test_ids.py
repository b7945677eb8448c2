"""Manifest ids: unique under concurrency, sortable by time, of one fixed form."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.manifests._ids import _encode, is_manifest_id, new_manifest_id


def test_ids_are_strictly_increasing_and_well_formed() -> None:
    ids = [new_manifest_id() for _ in range(5000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(x) == 26 and is_manifest_id(x) for x in ids)
    assert not is_manifest_id("not-an-id") and not is_manifest_id("I" * 26)


def test_ids_from_many_threads_are_distinct() -> None:
    found: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def make(into: list[str]) -> None:
        start.wait()
        into.extend(new_manifest_id() for _ in range(2000))

    threads = [threading.Thread(target=make, args=(into,)) for into in found]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [x for into in found for x in into]
    assert len(set(every)) == len(every) == 16000
    assert all(into == sorted(into) for into in found)


def _reference(value: int) -> str:
    """Crockford base32, five bits at a time from the low end: the obvious encoder."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    chars = []
    for _ in range(26):
        chars.append(alphabet[value & 31])
        value >>= 5
    return "".join(reversed(chars))


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_the_encoding_is_crockford_base32_of_the_128_bits(value: int) -> None:
    assert _encode(value) == _reference(value)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_makes_other_ids_than_its_parent() -> None:
    """The random part is reseeded in a forked child and the last id forgotten: a parent and
    its child making ids in the same millisecond never agree."""
    for _ in range(20):
        new_manifest_id()  # the child inherits this as the last id
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one id, then out without running the test's cleanups
            os.write(writer, new_manifest_id().encode())
            os._exit(0)
        os.close(writer)
        mine = new_manifest_id()
        with os.fdopen(reader, "rb") as pipe:
            theirs = pipe.read().decode()
        os.waitpid(pid, 0)
        assert is_manifest_id(theirs) and theirs[-16:] != mine[-16:]
