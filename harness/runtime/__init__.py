"""The OTP-style runtime: supervisors and actors on anyio (asyncio backend).

Public as ``harness.runtime`` (not re-exported at the top level of ``harness``).
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
