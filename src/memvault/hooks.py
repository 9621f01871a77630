"""Entry point of the git hook shims installed before :mod:`memvault.githooks` existed.

Shims of version 1 (still in repositories until ``memvault hooks install`` upgrades them)
run ``python -P -m memvault.hooks [--hooks-dir D] [--vault-dir V] NAME -- ARGS``. This
module keeps that command working by handing it to :func:`memvault.githooks.run.main`.
"""

from __future__ import annotations

import sys

from .githooks.run import main

if __name__ == "__main__":
    sys.exit(main())
