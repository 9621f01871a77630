"""What is paused: rules read from the tracked ``paused:`` list of ``.memvault/config.yaml``.

A rule names an agent, a channel, a scope, or any combination of them; a write (``add``,
``log``, ``ingest``, the MCP tools, the Claude Code hooks) is refused while a rule matches
every key it names. A scope alone is written as the bare scope name, as vaults before
agents and channels could be paused wrote it (``paused: [self]``); a combination is a
mapping (``- {agent: bob, channel: slack:#hr}``).

The model only: :mod:`memvault.capture` writes the rules, :class:`memvault.core.Core`
checks them before every write.
"""

from __future__ import annotations

from .errors import ConfigError, PermissionDeniedError
from .paths import CONFIG_PATH
from .values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

KEYS = ("agent", "channel", "scope")


class PauseRule(Record, frozen=True):
    """One pause: the agent, channel and scope it applies to (None: any)."""

    agent: str | None = None
    channel: str | None = None
    scope: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.agent or self.channel or self.scope)

    def matches(self, scope: str | None, agent: str | None, channel: str | None) -> bool:
        """Whether a write to ``scope`` by ``agent`` in ``channel`` falls under this rule."""
        for want, have in ((self.agent, agent), (self.channel, channel), (self.scope, scope)):
            if want is not None and want != have:
                return False
        return not self.empty

    def describe(self) -> str:
        """``agent 'bob', channel 'slack:#hr'``: the rule in words, for messages."""
        parts = [f"{key} '{value}'" for key, value in self.as_dict().items() if value]
        return ", ".join(parts)

    def options(self) -> str:
        """The same rule as command-line options: ``--agent bob --scope self``."""
        return " ".join(f"--{key} {value}" for key, value in self.as_dict().items() if value)

    def as_dict(self) -> dict[str, str | None]:
        return {"agent": self.agent, "channel": self.channel, "scope": self.scope}

    def stored(self) -> str | dict[str, str]:
        """How the rule is written in ``paused:``: a scope alone as its bare name."""
        if self.scope and not (self.agent or self.channel):
            return self.scope
        return {k: v for k, v in self.as_dict().items() if v}


def rule(
    *, agent: str | None = None, channel: str | None = None, scope: str | None = None
) -> PauseRule:
    """A rule from command-line values: blanks are None, a scope must be a known one."""
    if scope is not None:
        check_scope(scope)
    return PauseRule(_name(agent), _name(channel), _name(scope))


def check_scope(scope: str, key: str = "scope") -> str:
    """``scope`` when it is one of self|team|global, else a one-line error listing them."""
    from .errors import ValidationError
    from .memory import SCOPES

    if scope not in SCOPES:
        raise ValidationError(f"expected {'|'.join(SCOPES)}, got {scope!r}", key=key)
    return scope


def rules(value: Any) -> list[PauseRule]:
    """The rules of a ``paused:`` setting; a malformed entry is a config error naming it."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"expected a list, got {type(value).__name__}", CONFIG_PATH, "paused")
    found: list[PauseRule] = []
    for n, item in enumerate(value):
        where = f"paused[{n}]"
        if isinstance(item, str):
            found.append(PauseRule(scope=item))
            continue
        if not isinstance(item, dict) or not item or set(item) - set(KEYS):
            raise ConfigError(
                f"expected a scope name or a mapping of {'/'.join(KEYS)}, got {item!r}",
                CONFIG_PATH,
                where,
            )
        found.append(PauseRule(**{k: _name(item.get(k)) for k in KEYS}))
    return found


def refusal(
    value: Any, scope: str | None, agent: str | None, channel: str | None
) -> PauseRule | None:
    """The first rule of ``paused:`` (``value``) that stops this write, or None."""
    return next((r for r in rules(value) if r.matches(scope, agent, channel)), None)


def check_capture(
    value: Any, scope: str | None, agent: str | None, channel: str | None, where: str
) -> None:
    """Refuse a write that a pause rule stops, in one line that says how to resume."""
    stop = refusal(value, scope, agent, channel)
    if stop is not None:
        raise PermissionDeniedError(
            f"capture is paused for {stop.describe()} (run 'memvault resume {stop.options()}')",
            where,
            "paused",
        )


def _name(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text or None
