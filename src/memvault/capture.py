"""Pausing capture: a pause rule refuses every write it matches until it is resumed.

A rule names an agent, a channel, a scope or any combination (:mod:`memvault.pauses`).
The setting is the tracked ``paused:`` list of ``.memvault/config.yaml``, so a pause is one
commit (that says who paused what and why) and reaches every clone of the vault.
"""

from __future__ import annotations

from .core import Core
from .errors import ValidationError
from .pauses import PauseRule, rule, rules


def paused(vault: Core) -> list[PauseRule]:
    """The pause rules in force now."""
    return rules(vault.config.get("paused"))


def pause(
    vault: Core,
    *,
    agent: str | None = None,
    channel: str | None = None,
    scope: str | None = None,
    why: str = "",
) -> str | None:
    """Pause capture for an agent, a channel, a scope or a combination of them (one
    commit; None when that rule already was in force)."""
    new = _rule(agent, channel, scope)
    now = paused(vault)
    if new in now:
        return None
    stored = [r.stored() for r in [*now, new]]
    return vault.set_config("paused", stored, _message("pause", new, why))


def resume(
    vault: Core,
    *,
    agent: str | None = None,
    channel: str | None = None,
    scope: str | None = None,
    why: str = "",
) -> str | None:
    """Lift the pause rule with exactly these keys (one commit; None when there was none)."""
    old = _rule(agent, channel, scope)
    now = paused(vault)
    if old not in now:
        return None
    kept = [r.stored() for r in now if r != old]
    return vault.set_config("paused", kept, _message("resume", old, why))


def _rule(agent: str | None, channel: str | None, scope: str | None) -> PauseRule:
    new = rule(agent=agent, channel=channel, scope=scope)
    if new.empty:
        raise ValidationError("say what to pause: --agent, --channel and/or --scope", key="scope")
    return new


def _message(verb: str, which: PauseRule, why: str) -> str:
    why = " ".join(why.split())
    words = ", ".join(f"{k} {v}" for k, v in which.as_dict().items() if v)
    return f"{verb} capture for {words}" + (f": {why}" if why else "")
