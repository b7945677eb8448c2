"""The OTP-style runtime: supervisors and actors on anyio (asyncio backend).

An actor under a supervisor, called from the host::

    import anyio
    from harness.runtime import Actor, Supervisor

    class Counter(Actor):
        async def init(self) -> None:
            self.n = 0

        async def handle_call(self, msg):
            self.n += msg
            return self.n

    async def main() -> None:
        counter = Counter()
        async with Supervisor([counter.child_spec(id="counter")]):
            assert await counter.call(2) == 2

    anyio.run(main)

Public as ``harness.runtime`` (not re-exported at the top level of ``harness``). The parts:
``supervisor`` (and the modules it names), ``actor``, ``child`` (``ChildSpec``, ``ChildInfo``)
and ``errors``.
"""

from harness.runtime.actor import Actor as Actor
from harness.runtime.child import ChildInfo as ChildInfo
from harness.runtime.child import ChildSpec as ChildSpec
from harness.runtime.errors import ActorError as ActorError
from harness.runtime.errors import ActorExited as ActorExited
from harness.runtime.errors import AdminCallBeforeReady as AdminCallBeforeReady
from harness.runtime.errors import CallingSelf as CallingSelf
from harness.runtime.errors import ChildRunning as ChildRunning
from harness.runtime.errors import DuplicateChild as DuplicateChild
from harness.runtime.errors import FailedToStartChild as FailedToStartChild
from harness.runtime.errors import MailboxFull as MailboxFull
from harness.runtime.errors import MaxRestartsExceeded as MaxRestartsExceeded
from harness.runtime.errors import NoProc as NoProc
from harness.runtime.errors import SupervisorError as SupervisorError
from harness.runtime.errors import SupervisorNotRunning as SupervisorNotRunning
from harness.runtime.errors import UnknownChild as UnknownChild
from harness.runtime.supervisor import Supervisor as Supervisor

__all__ = [
    "Actor",
    "ActorError",
    "ActorExited",
    "AdminCallBeforeReady",
    "CallingSelf",
    "ChildInfo",
    "ChildRunning",
    "ChildSpec",
    "DuplicateChild",
    "FailedToStartChild",
    "MailboxFull",
    "MaxRestartsExceeded",
    "NoProc",
    "Supervisor",
    "SupervisorError",
    "SupervisorNotRunning",
    "UnknownChild",
]
