"""The recorder: a supervised actor that writes builds to the store with group commit.

What ``Harness(manifests=path)`` runs in its tree; on its own::

    from harness.manifests import ManifestStore
    from harness.manifests._recorder import Recorder
    from harness.runtime import Supervisor

    async with ManifestStore.open("manifests.db", create=True) as store:
        recorder = Recorder(store)
        async with Supervisor([recorder.child_spec()]):
            await recorder.record(record)     # returns once the record is durable
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from harness.manifests._codec import Encoded
from harness.manifests._errors import ManifestStoreError
from harness.manifests._record import ManifestRecord, PromptRecord
from harness.manifests._store import ManifestStore
from harness.runtime import Actor, MailboxFull, NoProc
from harness.runtime._actor import ExitReason

__all__ = ["Recorder"]

logger = logging.getLogger(__name__)

_FLUSH = "flush"
"""The one message the actor gets: write what is buffered (at most one is queued at a time)."""


@dataclass(slots=True)
class _Pending:
    record: Encoded  # encoded as it came: the batch written after the last build is ready
    waiter: asyncio.Future[None]
    queued_at: float  # the loop's clock when it was buffered


def _resolve(item: _Pending, error: BaseException | None = None) -> None:
    if item.waiter.done():
        return
    if error is None:
        item.waiter.set_result(None)
    else:
        item.waiter.set_exception(error)


class Recorder(Actor):
    """Writes ``ManifestRecord``s to one store, batching concurrent ones.

    A build puts its record in the actor's buffer and waits for its own answer; the first
    record of a batch wakes the actor with one message, and the actor writes everything
    buffered by then in one transaction, then what came during that write, until the buffer
    is empty. So a build costs the actor no message of its own and wakes once, when its
    record is durable. While the actor runs, every buffered record is answered: written, or
    failed with a ``ManifestStoreError`` (on its way out the actor writes what is left);
    a record the actor has not taken within ``enqueue_timeout`` fails so.
    """

    mailbox_size = 16

    def __init__(self, store: ManifestStore | None, *, enqueue_timeout: float = 30.0) -> None:
        """``store`` may be given later (``recorder.store = ...``), before the first record."""
        super().__init__()
        self.store = store
        self.enqueue_timeout = enqueue_timeout
        self._buffer: list[_Pending] = []
        self._inflight: list[_Pending] = []
        self._woken = False  # a _FLUSH is queued or being handled
        self._expiry: asyncio.TimerHandle | None = None
        self.batches = 0  # transactions committed (for tests and benchmarks)

    def child_spec(self, id: str | None = "manifest_recorder", **options: Any) -> Any:
        """As ``Actor.child_spec``; the id defaults to ``manifest_recorder``."""
        return super().child_spec(id, **options)

    async def init(self) -> None:
        # Nothing buffered survives a restart unanswered: terminate answered it.
        self._buffer, self._inflight, self._woken = [], [], False

    async def record(self, record: ManifestRecord | PromptRecord) -> None:
        """Record ``record`` durably; ``ManifestStoreError`` when it cannot be recorded."""
        if self.store is None:
            raise self._not_running("it has no store")
        encoded = self.store.prepare(record)  # a record no store can hold fails alone
        del record  # only the encoded row waits for the commit
        if not self.running:  # checked with no await before the append: terminate sees it
            raise self._not_running("it is not started, or has stopped")
        loop = asyncio.get_running_loop()
        pending = _Pending(encoded, loop.create_future(), loop.time())
        self._buffer.append(pending)
        if not self._woken:
            try:
                self.cast(_FLUSH)
            except (NoProc, MailboxFull) as exc:
                self._buffer.remove(pending)
                raise self._not_running(str(exc)) from exc
            self._woken = True
        if self._expiry is None:
            self._expiry = loop.call_later(self.enqueue_timeout, self._expire)
        await pending.waiter

    def _expire(self) -> None:
        """Fail the records buffered longer than ``enqueue_timeout`` (the store is stuck)."""
        self._expiry = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        waiting = []
        for item in self._buffer:
            if item.queued_at + self.enqueue_timeout <= now:
                _resolve(
                    item,
                    ManifestStoreError(
                        f"the manifest recorder for {self._where()} did not take the record "
                        f"within {self.enqueue_timeout:g}s (the store is too slow or stuck): "
                        "check the disk holding it"
                    ),
                )
            elif not item.waiter.done():
                waiting.append(item)
        self._buffer = waiting
        if waiting:
            delay = waiting[0].queued_at + self.enqueue_timeout - now
            self._expiry = loop.call_later(delay, self._expire)

    def _store(self) -> ManifestStore:
        if self.store is None:
            raise ManifestStoreError("the manifest recorder has no store: give it one first")
        return self.store

    def _where(self) -> str:
        return self.store.location if self.store is not None else "(no store yet)"

    def _not_running(self, why: str) -> ManifestStoreError:
        return ManifestStoreError(
            f"the manifest recorder for {self._where()} is not running ({why}): "
            "build inside `async with Harness(...)`; if it keeps failing, check the logs for "
            "recorder crashes"
        )

    async def handle_cast(self, msg: Any) -> None:
        if msg != _FLUSH:
            raise TypeError(f"Recorder takes records through record(), got {msg!r}")
        while self._buffer:
            await self._flush()
        self._woken = False  # no await since the buffer was seen empty: the next record wakes

    async def _flush(self) -> None:
        batch, self._buffer = self._buffer, []
        batch = [item for item in batch if not item.waiter.done()]  # cancelled builds
        if not batch:
            return
        self._inflight = batch
        try:
            await self._store().record(*(item.record for item in batch))
        except ManifestStoreError as exc:
            if len(batch) == 1:
                self._inflight = []
                _resolve(batch[0], exc)
                return
            await self._one_by_one(batch)
            return
        # No checkpoint between the write and these lines: the waiters learn of it even if a
        # cancellation is waiting to be delivered.
        self._inflight = []
        self.batches += 1
        for item in batch:
            _resolve(item)

    async def _one_by_one(self, batch: list[_Pending]) -> None:
        """After a failed batch: each record alone, so one bad record fails only itself."""
        while batch:
            item = batch[0]
            try:
                await self._store().record(item.record)
            except ManifestStoreError as exc:
                error: ManifestStoreError | None = exc
            else:
                error = None
                self.batches += 1
            batch.pop(0)
            _resolve(item, error)

    async def terminate(self, reason: ExitReason) -> None:
        """Drain: write what is buffered or was interrupted, then answer every waiter."""
        pending = [*self._inflight, *self._buffer]
        self._inflight, self._buffer = [], []
        pending = [item for item in pending if not item.waiter.done()]
        if not pending:
            return
        logger.info(
            "recorder_drain records=%d reason=%s",
            len(pending),
            reason if isinstance(reason, str) else type(reason).__name__,
            extra={"event": "recorder_drain"},
        )
        try:
            await self._store().record(*(item.record for item in pending))
        except ManifestStoreError:
            await self._one_by_one(pending)
        else:
            for item in pending:
                _resolve(item)
        finally:
            for item in pending:  # terminate was cut short: these were not written
                _resolve(
                    item,
                    ManifestStoreError(
                        f"the manifest recorder for {self._where()} stopped before "
                        "this build was recorded (its shutdown timeout cut the drain short)"
                    ),
                )
