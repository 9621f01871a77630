"""``python -m memvault.githooks NAME ...``: what the installed hook shims run."""

import sys

from .run import main

sys.exit(main())
