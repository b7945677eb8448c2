"""The parser repair: untrusted issue text, a denied secret and an expired summary, as one
runnable build recorded in a manifest store.

Run: ``python examples/scenarios/parser_repair.py`` (from the repository root; the store is
written to a temporary directory).

- Issue 842 is user-authored: evidence, not instructions (``trust="untrusted"``), rendered
  inside a data boundary; its request to disable validation carries no authority.
- ``.env.production`` is outside the run's read grant: it is denied before anything is read,
  and neither its text nor its sha256 reaches the prompt, the manifest or the store.
- The summary generated at r39 is older than its ``max_age``: ``stale``, never used to
  satisfy the requirement, so the build is ``NEEDS_MORE_CONTEXT`` until the source is read.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.scenarios.seeds import (  # the evidence, written once
    ACME,
    SECRET,
    excerpt,
    harness,
    parser_evidence,
    parser_request,
)
from harness.build import PromptBuild
from harness.debug import format_build


async def record(store: Path) -> PromptBuild:
    """Build once, recorded in ``store``."""
    async with harness(manifests=store) as h:
        return await h.build(
            ACME,
            agent="reviewer",
            project_id="acme",
            request=parser_request(),
            evidence=parser_evidence(datetime.now(UTC)),
        )


def main(store_dir: Path) -> None:
    build = anyio.run(record, store_dir / "manifests.db")
    assert build.readiness is not None
    manifest = build.prompt.manifest()
    print(f"== parser repair: {build.readiness.status}")
    print(excerpt(format_build(build), also=("  source_summary", "  issue")))
    readiness = manifest["request"]["readiness"]
    print(json.dumps({k: readiness[k] for k in ("status", "denied", "expired")}, indent=2))
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    stored = b"".join(path.read_bytes() for path in store_dir.iterdir())
    places = (stored, build.prompt.text.encode(), json.dumps(manifest).encode())
    leaked = any(SECRET.encode() in place or digest.encode() in place for place in places)
    print(f"secret in the prompt, the manifest or the store: {'yes' if leaked else 'no'}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as directory:
        main(Path(directory))
