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

The public modules: ``supervisor``, ``dynamic`` (``DynamicSupervisor``), ``registry``,
``monitor``, ``tasks`` (``TaskSupervisor``), ``actor``, ``child`` (``ChildSpec``,
``ChildInfo``) and ``errors``; the modules named with a leading underscore are internal.
"""

from harness.runtime._actor import Actor as Actor
from harness.runtime._actor import Caller as Caller
from harness.runtime._actor import ExitReason as ExitReason
from harness.runtime._child import ChildInfo as ChildInfo
from harness.runtime._child import ChildSpec as ChildSpec
from harness.runtime._dynamic import ChildRef as ChildRef
from harness.runtime._dynamic import DynamicSupervisor as DynamicSupervisor
from harness.runtime._errors import ActorError as ActorError
from harness.runtime._errors import ActorExited as ActorExited
from harness.runtime._errors import AdminCallBeforeReady as AdminCallBeforeReady
from harness.runtime._errors import AlreadyRegistered as AlreadyRegistered
from harness.runtime._errors import CallingSelf as CallingSelf
from harness.runtime._errors import ChildRunning as ChildRunning
from harness.runtime._errors import DuplicateChild as DuplicateChild
from harness.runtime._errors import FailedToStartChild as FailedToStartChild
from harness.runtime._errors import MailboxFull as MailboxFull
from harness.runtime._errors import MaxChildrenReached as MaxChildrenReached
from harness.runtime._errors import MaxRestartsExceeded as MaxRestartsExceeded
from harness.runtime._errors import NoProc as NoProc
from harness.runtime._errors import SupervisorError as SupervisorError
from harness.runtime._errors import SupervisorNotRunning as SupervisorNotRunning
from harness.runtime._errors import UnknownChild as UnknownChild
from harness.runtime._monitor import Monitor as Monitor
from harness.runtime._monitor import monitor as monitor
from harness.runtime._registry import Registry as Registry
from harness.runtime._supervisor import Supervisor as Supervisor
from harness.runtime._tasks import TaskRef as TaskRef
from harness.runtime._tasks import TaskSupervisor as TaskSupervisor

__all__ = [
    "Actor",
    "ActorError",
    "ActorExited",
    "AdminCallBeforeReady",
    "AlreadyRegistered",
    "Caller",
    "CallingSelf",
    "ChildInfo",
    "ChildRef",
    "ChildRunning",
    "ChildSpec",
    "DuplicateChild",
    "DynamicSupervisor",
    "ExitReason",
    "FailedToStartChild",
    "MailboxFull",
    "MaxChildrenReached",
    "MaxRestartsExceeded",
    "Monitor",
    "NoProc",
    "Registry",
    "Supervisor",
    "SupervisorError",
    "SupervisorNotRunning",
    "TaskRef",
    "TaskSupervisor",
    "UnknownChild",
    "monitor",
]
