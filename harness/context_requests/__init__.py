"""Context requests: what a decision needs, and whether the evidence gathered gives it.

A run states the decision it prepares as a :class:`ContextRequest` (its requirements, the
permissions it holds, and per claim type which authority classes decide, highest first).
Evidence is ordinary :class:`~harness.prompt_assembler.Unit` values carrying ``kind``,
``claim``, ``value``, ``authority`` and ``requires``. :func:`readiness` says, before the model
is called, whether the decision can be made::

    from harness.context_requests import ContextRequest, Requirement, readiness
    from harness.prompt_assembler import Unit

    request = ContextRequest(
        "raise the timeout",
        requirements=[Requirement("effective_config", claim="timeout.production")],
        authority={"timeout.production": ["runtime_control_plane", "documentation"]},
    )
    readme = Unit("README.md", "timeout 30 s", kind="doc", claim="timeout.production",
                  value="30", authority="documentation")
    config = Unit("prod.yaml", "timeout: 5", kind="effective_config",
                  claim="timeout.production", value="5", authority="runtime_control_plane")
    result = readiness(request, [readme, config])
    assert result.status == "READY" and result.outranked == ("README.md",)
"""

from harness.context_requests._gate import (
    NotReady,
    Readiness,
    RequirementStatus,
    Status,
    readiness,
)
from harness.context_requests._request import ContextRequest, Requirement

__all__ = [
    "ContextRequest",
    "NotReady",
    "Readiness",
    "Requirement",
    "RequirementStatus",
    "Status",
    "readiness",
]
