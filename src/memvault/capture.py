"""Pausing capture: a paused scope refuses every write to it until it is resumed.

The setting is the tracked ``paused:`` list of ``.memvault/config.yaml``, so a pause is one
commit (that says who paused what and why) and reaches every clone of the vault.
"""

from __future__ import annotations

from .core import Core
from .errors import ValidationError
from .memory import SCOPES


def _check(scope: str) -> str:
    if scope not in SCOPES:
        raise ValidationError(f"expected {'|'.join(SCOPES)}, got {scope!r}", key="scope")
    return scope


def paused(vault: Core) -> list[str]:
    """The scopes whose capture is paused now."""
    return [str(s) for s in (vault.config.get("paused") or [])]


def pause(vault: Core, scope: str, why: str = "") -> str | None:
    """Pause capture for ``scope`` (one commit; None when it already was paused)."""
    now = paused(vault)
    if _check(scope) in now:
        return None
    return vault.set_config("paused", [*now, scope], _message("pause", scope, why))


def resume(vault: Core, scope: str, why: str = "") -> str | None:
    """Resume capture for ``scope`` (one commit; None when it was not paused)."""
    now = paused(vault)
    if _check(scope) not in now:
        return None
    kept = [s for s in now if s != scope]
    return vault.set_config("paused", kept, _message("resume", scope, why))


def _message(verb: str, scope: str, why: str) -> str:
    why = " ".join(why.split())
    return f"{verb} capture for scope {scope}" + (f": {why}" if why else "")
