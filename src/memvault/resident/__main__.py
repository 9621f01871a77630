"""``python -m memvault.resident ROOT``: the resident process (started by the command line)."""

from __future__ import annotations

import sys
from pathlib import Path

from .server import serve

if len(sys.argv) != 2:
    print("usage: python -m memvault.resident VAULT_ROOT", file=sys.stderr)
    raise SystemExit(2)
raise SystemExit(serve(Path(sys.argv[1])))
