"""Settings: ``.memvault/config.yaml`` over built-in defaults, then ``MEMVAULT_*`` env vars.

Flags are applied last by the adapters (they pass overrides to :func:`load_config`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .errors import ConfigError, yaml_message
from .paths import CONFIG_CACHE_PATH, CONFIG_PATH
from .values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

DEFAULTS: dict[str, Any] = {
    "version": 1,
    "embedder": "all-MiniLM-L6-v2",
    "languages": ["en"],
    "identity": {"agent": None, "team": None, "role": None},
    "git": {"author_name": "memvault", "author_email": "memvault@localhost", "commit": True},
    "defaults": {"scope": "team", "importance": 3, "decay": None, "confidence": "medium"},
    "index": {"url": None, "chunk_words": 180},
    "search": {"limit": 10, "rrf_k": 60},
    "limits": {"max_file_bytes": 2_000_000, "max_limit": 1000, "max_budget": 200_000},
    "decay": {
        "rates": {"fast": 0.5, "normal": 0.8, "slow": 0.95, "never": 1.0},
        "archive_below": 0.1,
        "default": {"episodic": "normal", "semantic": "never", "procedural": "never"},
    },
    "retention": {"self": 90, "team": 365, "global": None, "transcripts": 548},
    "consolidate": {
        "dedup_threshold": 0.68,  # with the words agreeing: consolidate/compare.py
        "same_event_hours": 6,
        "promote_min_episodes": 3,
        # a procedure used this often that succeeds less often gets a review proposal
        "review_min_uses": 4,
        "review_below": 0.5,
        "distill_after_days": 30,
        # facts said in user turns become semantic memories (consolidate/chatfacts.py)
        "distill_facts": True,
        "summarizer_command": None,
    },
    # a dispute nobody resolved for this long: the newer fact wins at the next consolidation
    # ('never' keeps it for a review); docs/lifecycle.md
    "disputes": {"newer_wins_after": "14d"},
    # facts without a subject supersede by inference (docs/lifecycle.md); similarity: the
    # cosine a fact in force must reach to be compared (default: measured per embedder)
    "supersede": {"infer": True, "similarity": None},
    # validate's own judge (an LLM behind a command; docs/validate.md), and its time limit
    "validate": {"judge_command": None, "judge_timeout": 60},
    "security": {"secrets": "refuse", "allow": [], "patterns": [], "redact": {}},
    # the scope log, ingest and MCP log_turn save a new session with (None: defaults.scope);
    # the Claude Code hooks name theirs (integrations install --capture-scope, default self)
    "capture": {"scope": None},
    # a per-vault process that keeps the model and index loaded for the command line and the
    # agent hooks, started on demand, gone after idle_seconds without a request (docs/resident.md)
    "resident": {"enabled": True, "idle_seconds": 600},
    "paused": [],
}

# Settings that are names, not numbers: YAML reads an unquoted ``007`` as 7 and a hex id such as
# ``33515721700140e6`` as a float, so these keep the text written in the file.
NAME_KEYS = (
    "index.vault_id",
    "identity.agent",
    "identity.team",
    "identity.role",
    "git.author_name",
    "git.author_email",
)
# Bumped when what the cache holds changes meaning (2: NAME_KEYS kept as text).
_CACHE_FORMAT = 2

# env var -> dotted key
ENV_KEYS = {
    "MEMVAULT_EMBEDDER": "embedder",
    "MEMVAULT_AGENT": "identity.agent",
    "MEMVAULT_TEAM": "identity.team",
    "MEMVAULT_ROLE": "identity.role",
    "MEMVAULT_INDEX_URL": "index.url",
    "MEMVAULT_AUTHOR_NAME": "git.author_name",
    "MEMVAULT_AUTHOR_EMAIL": "git.author_email",
    # a command of your own for this machine: runs without `memvault allow-command`
    "MEMVAULT_JUDGE_COMMAND": "validate.judge_command",
    "MEMVAULT_SUMMARIZER_COMMAND": "consolidate.summarizer_command",
    "MEMVAULT_RESIDENT": "resident.enabled",
}

# How a yes/no setting may be written (in the file, or in an env var such as MEMVAULT_RESIDENT).
SWITCH_VALUES = {
    "1": True, "true": True, "yes": True, "on": True,
    "0": False, "false": False, "no": False, "off": False,
}  # fmt: skip


def _copy(value: Any) -> Any:
    """A deep copy of plain settings (dicts, lists, scalars), without importing copy."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


class Config(Record):
    """Settings as nested dicts; ``get("a.b")`` reads a dotted key. ``local``: the dotted keys
    set on this machine (``MEMVAULT_*`` env vars, overrides), not by the tracked file."""

    data: dict[str, Any]
    path: Path | None = None
    local: frozenset[str] = frozenset()

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return default if node is None else node

    def set(self, dotted: str, value: Any) -> None:
        node = self.data
        parts = dotted.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value

    def int(self, dotted: str) -> int:
        value = self.get(dotted)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"expected an integer, got {value!r}", CONFIG_PATH, dotted)
        return value

    def float(self, dotted: str) -> float:
        value = self.get(dotted)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"expected a number, got {value!r}", CONFIG_PATH, dotted)
        return float(value)


def load_config(root: Path | None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Defaults, then the vault's config file, then env vars, then ``overrides`` (dotted keys)."""
    data = _copy(DEFAULTS)
    path = None
    if root is not None:
        path = root / CONFIG_PATH
        if path.exists():
            _merge(data, _read_config_file(root, path))
    config = Config(data, path)
    local: set[str] = set()
    for env, key in ENV_KEYS.items():
        value = os.environ.get(env)
        if value:
            config.set(key, value)
            local.add(key)
    for key, value in (overrides or {}).items():
        if value is not None:
            config.set(key, value)
            local.add(key)
    config.local = frozenset(local)
    _check(config)
    return config


def _read_config_file(root: Path, path: Path) -> dict[str, Any]:
    """The config file's settings, from a cache keyed by the file's stat when it is fresh.

    Parsing YAML means importing ruamel ; every command opens the config, so the
    parsed mapping is kept in the (gitignored, disposable) index folder as ``marshal`` data.
    """
    import marshal

    st = path.stat()
    stamp = (_CACHE_FORMAT, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    cache = root / CONFIG_CACHE_PATH
    try:
        cached_stamp, cached = marshal.loads(cache.read_bytes())
        if tuple(cached_stamp) == stamp and isinstance(cached, dict):
            return cached
    except (OSError, EOFError, ValueError, TypeError):
        pass
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        text = path.read_text(encoding="utf-8")
        loaded = YAML(typ="safe").load(text)
    except (YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(yaml_message(exc), CONFIG_PATH) from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, Mapping):
        raise ConfigError("expected a mapping of settings", CONFIG_PATH)
    _names_as_written(loaded, text)
    try:  # only plain data is cached (a YAML timestamp, say, is not marshal-able)
        blob = marshal.dumps((stamp, dict(loaded)))
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, cache)
    except (ValueError, OSError):
        pass
    return dict(loaded)


def _names_as_written(loaded: Mapping[str, Any], text: str) -> None:
    """Put back the file's own text for a NAME_KEYS value YAML read as a number or boolean.

    The composed node tree (ruamel's ``compose``) keeps every scalar as it was written.
    """
    wrong = [k for k in NAME_KEYS if not isinstance(_lookup(loaded, k), (str, type(None)))]
    wrong = [k for k in wrong if _lookup(loaded, k) is not _MISSING]
    if not wrong:
        return
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, ScalarNode

    root = YAML(typ="safe").compose(text)
    for dotted in wrong:
        *parents, last = dotted.split(".")
        node: Any = root
        for part in dotted.split("."):
            found = None
            if isinstance(node, MappingNode):
                found = next((v for k, v in node.value if k.value == part), None)
            node = found
        if isinstance(node, ScalarNode):  # else an alias or merge key: left as YAML read it
            parent: Any = loaded
            for part in parents:
                parent = parent[part]
            parent[last] = node.value


_MISSING = object()


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _check(config: Config) -> None:
    rates = config.get("decay.rates", {})
    if not isinstance(rates, Mapping):
        raise ConfigError("expected a mapping of rates", CONFIG_PATH, "decay.rates")
    for name, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ConfigError(
                f"expected a number in 0-1, got {rate!r}", CONFIG_PATH, f"decay.rates.{name}"
            )
    scope = config.get("defaults.scope")
    if scope not in ("self", "team", "global"):
        raise ConfigError(
            f"expected self|team|global, got {scope!r}", CONFIG_PATH, "defaults.scope"
        )
    capture = config.get("capture.scope")
    if capture is not None and capture not in ("self", "team", "global"):
        raise ConfigError(
            f"expected self|team|global, got {capture!r}", CONFIG_PATH, "capture.scope"
        )
    if not isinstance(config.get("embedder"), str):
        raise ConfigError("expected a model name", CONFIG_PATH, "embedder")
    check_languages(config.get("languages"), CONFIG_PATH)
    for key in ("limits.max_file_bytes", "limits.max_limit", "limits.max_budget"):
        config.int(key)
    config.set("resident.enabled", switch(config, "resident.enabled", "MEMVAULT_RESIDENT"))
    idle = config.get("resident.idle_seconds")
    if isinstance(idle, bool) or not isinstance(idle, (int, float)) or idle <= 0:
        raise ConfigError(
            f"expected a number of seconds above 0, got {idle!r}",
            CONFIG_PATH,
            "resident.idle_seconds",
        )


def switch(config: Config, dotted: str, env: str) -> bool:
    """A yes/no setting as a bool; an unknown value is an error naming where it was set."""
    value = config.get(dotted)
    if isinstance(value, bool):
        return value
    found = SWITCH_VALUES.get(str(value).strip().lower())
    if found is None:
        where = env if dotted in config.local else CONFIG_PATH
        raise ConfigError(f"expected {'|'.join(SWITCH_VALUES)}, got {value!r}", where, dotted)
    return found


def resident_enabled(root: Path) -> bool:
    """Whether this vault's commands may be served by a resident process (``resident.enabled``,
    ``$MEMVAULT_RESIDENT``)."""
    return bool(load_config(root).get("resident.enabled"))


LANGUAGES = ("en", "pt", "ru", "uk")  # the languages memvault treats as its own


def check_languages(value: Any, where: str) -> list[str]:
    """``languages`` as a list of known codes (a comma-separated string is accepted)."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError(
            f"expected a list of {'|'.join(LANGUAGES)}, got {value!r}", where, "languages"
        )
    out = [str(item).strip().lower() for item in items]
    bad = [code for code in out if code not in LANGUAGES]
    if bad:
        raise ConfigError(f"expected {'|'.join(LANGUAGES)}, got {bad[0]!r}", where, "languages")
    return out
