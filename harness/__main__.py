"""``python -m harness``: the command line (see ``harness.cli``).

Run it as::

    python -m harness --version
    python -m harness --help

This module only hands ``sys.argv`` to ``harness.cli.main``; the commands live there.
"""

from harness.cli import main

raise SystemExit(main())
