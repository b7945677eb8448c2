"""The recorder: a supervised actor that writes builds to the store with group commit.

What ``Harness(manifests=path)`` runs in its tree; on its own::

    from harness.manifests import ManifestStore
    from harness.manifests.recorder import Recorder
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

from harness.manifests.codec import check_record
from harness.manifests.errors import ManifestStoreError
from harness.manifests.record import ManifestRecord
from harness.manifests.store import ManifestStore
from harness.runtime import Actor, ActorExited, NoProc
from harness.runtime.actor import ExitReason

__all__ = ["Recorder"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Pending:
    record: ManifestRecord
    waiter: asyncio.Future[None]
    accepted: bool = False  # buffered by the actor: from then on the actor answers the waiter


def _resolve(item: _Pending, error: BaseException | None = None) -> None:
    if item.waiter.done():
        return
    if error is None:
        item.waiter.set_result(None)
    else:
        item.waiter.set_exception(error)


class Recorder(Actor):
    """Writes ``ManifestRecord``s to one store, batching concurrent ones (module notes)."""

    mailbox_size = 4096

    def __init__(self, store: ManifestStore | None, *, enqueue_timeout: float = 30.0) -> None:
        """``store`` may be given later (``recorder.store = ...``), before the first record."""
        super().__init__()
        self.store = store
        self.enqueue_timeout = enqueue_timeout
        self._buffer: list[_Pending] = []
        self._inflight: list[_Pending] = []
        self.batches = 0  # transactions committed (for tests and benchmarks)

    def child_spec(self, id: str | None = "manifest_recorder", **options: Any) -> Any:
        """As ``Actor.child_spec``; the id defaults to ``manifest_recorder``."""
        return super().child_spec(id, **options)

    async def init(self) -> None:
        # Nothing buffered survives a restart unanswered: terminate answered it.
        self._buffer, self._inflight = [], []

    async def record(self, record: ManifestRecord) -> None:
        """Record ``record`` durably; ``ManifestStoreError`` when it cannot be recorded."""
        if self.store is None:
            raise self._not_running("it has no store")
        check_record(record)  # a record no store can hold fails alone, never its batch
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        pending = _Pending(record, waiter)
        try:
            await self.call(pending, timeout=self.enqueue_timeout)
        except ActorExited:
            if not pending.accepted:
                raise self._not_running("it stopped before taking the record") from None
            # Stopped while writing it: terminate drains it and answers the waiter.
        except NoProc as exc:
            raise self._not_running(str(exc)) from exc
        except TimeoutError as exc:
            if pending.accepted:  # taken, and being written: wait for the outcome
                await waiter
                return
            raise ManifestStoreError(
                f"the manifest recorder for {self._where()} did not take the record "
                f"within {self.enqueue_timeout:g}s (the store is too slow or stuck): check "
                "the disk holding it"
            ) from exc
        await waiter

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

    async def handle_call(self, msg: Any) -> None:
        if not isinstance(msg, _Pending):
            raise TypeError(f"Recorder.call expects a record, got {type(msg).__name__}")
        msg.accepted = True
        self._buffer.append(msg)
        mailbox = self._mailbox
        if mailbox is None or mailbox.statistics().current_buffer_used == 0:
            await self._flush()

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
