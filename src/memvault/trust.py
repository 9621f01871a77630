"""Commands named in the shared config, and which of them the user on this machine allowed.

``validate.judge_command`` and ``consolidate.summarizer_command`` are settings of the tracked
``.memvault/config.yaml``: any teammate's commit can set them and a ``git pull`` brings the
change to every clone, where ``validate`` (a read-only MCP tool agents are pre-approved to
call) or ``consolidate`` would run it. git never takes hooks from a repository for this
reason. So, the way direnv treats ``.envrc``, a command from that file runs only once the user
here allowed that exact command (``memvault allow-command KEY``, :meth:`Vault.allow_command`);
until then validate and consolidate use their built-in judge and summarizer and say why
(:attr:`CommandStatus.note`).

**The record** is ``allowed-commands.json`` in the user's config folder
(:func:`memvault.paths.user_config_dir`: ``$MEMVAULT_CONFIG_DIR``, ``$XDG_CONFIG_HOME/memvault``
or ``~/.config/memvault``), keyed by the vault's resolved path: for each key, the sha256 of the
key and the exact command line. A changed command has another hash, so it needs allowing
again (so does a vault moved to another folder). Not inside the vault: a file there, even a
git-ignored one, can be committed (``git add -f``) and pulled along with the command it
vouches for, and ``git clean -x`` deletes it; not in ``.memvault/index/``, which a full
reindex deletes; not in the cache folder, which is disposable. A missing or damaged record
allows nothing.

**Your own commands** need no record: a value set on this machine -- the
``MEMVAULT_JUDGE_COMMAND`` / ``MEMVAULT_SUMMARIZER_COMMAND`` env vars, or an override given to
``Vault.open`` (:attr:`memvault.config.Config.local`) -- runs as it is. ``Vault.set_config``
of one of these keys records the value it writes (the user set it, here).

The hash covers the command line, not the files it runs: a command naming a script inside
the vault (``python3 tools/judge.py``) can change with a pull while its line stays the same.
:attr:`CommandStatus.vault_files` names such files so ``allow-command`` can warn.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .errors import ConfigError, MemvaultError
from .paths import ALLOWED_COMMANDS, CONFIG_PATH, user_config_dir
from .values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .config import Config

# each key that names a command, and what runs while it is not allowed
COMMAND_KEYS = {
    "validate.judge_command": "the built-in judge",
    "consolidate.summarizer_command": "the built-in summarizer",
}
_FORMAT = 1


class CommandStatus(Record, frozen=True):
    """One command key of a vault: its value, where it came from (``source``: unset, config
    for the tracked file, local for an env var or override) and whether it may run here."""

    key: str
    command: str | None
    source: str
    allowed: bool
    sha256: str | None = None
    allowed_command: str | None = None  # what this user allowed, when there is a record
    allowed_at: str | None = None
    vault_files: tuple[str, ...] = ()  # files inside the vault the command line names

    @property
    def runs(self) -> bool:
        return self.command is not None and self.allowed

    @property
    def state(self) -> str:
        """unset, local (set on this machine), allowed, changed (since allowed) or not allowed."""
        if self.command is None:
            return "unset"
        if self.source == "local":
            return "local"
        if self.allowed:
            return "allowed"
        return "changed" if self.allowed_command is not None else "not allowed"

    @property
    def note(self) -> str | None:
        """Why the command does not run, and how to allow it (one line); None when it runs or
        none is set."""
        if self.command is None or self.allowed:
            return None
        why = (
            "changed since you allowed it"
            if self.allowed_command is not None
            else "is not allowed on this machine"
        )
        return (
            f"{self.key} in {CONFIG_PATH} {why}: using {COMMAND_KEYS[self.key]}; "
            f"to run it: memvault allow-command {self.key}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "command": self.command,
            "source": self.source,
            "state": self.state,
            "runs": self.runs,
            "sha256": self.sha256,
            "allowed_command": self.allowed_command,
            "allowed_at": self.allowed_at,
            "vault_files": list(self.vault_files),
            "note": self.note,
        }


def check_key(key: str) -> str:
    """``key`` if it names a command; else a one-line error listing the keys that do."""
    if key not in COMMAND_KEYS:
        raise ConfigError(f"unknown key {key!r}: expected one of {', '.join(COMMAND_KEYS)}")
    return key


def command_hash(key: str, command: str) -> str:
    """The sha256 of the key and the exact command line (what a record vouches for)."""
    return hashlib.sha256(f"{key}\0{command}".encode()).hexdigest()


def record_file() -> Path:
    """This user's record of allowed commands."""
    return user_config_dir() / ALLOWED_COMMANDS


def _vault_key(root: Path) -> str:
    return str(Path(root).resolve())


def _read() -> dict[str, Any]:
    try:
        data = json.loads(record_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or damaged: nothing is allowed (the next allow rewrites it)
    vaults = data.get("vaults") if isinstance(data, dict) else None
    return vaults if isinstance(vaults, dict) else {}


def _write(vaults: dict[str, Any]) -> None:
    from .store.files import atomic_write

    path = record_file()
    body = {"format": _FORMAT, "vaults": {k: v for k, v in vaults.items() if v}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
        os.chmod(path, 0o600)
    except OSError as exc:
        raise MemvaultError(f"cannot write: {exc.strerror or exc}", str(path)) from None


def status(root: Path, config: Config, key: str) -> CommandStatus:
    """Whether ``key``'s command may run in the vault at ``root`` (reads the record only when
    a command from the tracked file is set)."""
    check_key(key)
    value = config.get(key)
    if value is None or not str(value).strip():
        return CommandStatus(key, None, "unset", False)
    command = str(value)
    digest = command_hash(key, command)
    files = _vault_files(root, command)
    if key in config.local:
        return CommandStatus(key, command, "local", True, digest, vault_files=files)
    record = _read().get(_vault_key(root), {}).get(key)
    if not isinstance(record, dict):
        return CommandStatus(key, command, "config", False, digest, vault_files=files)
    return CommandStatus(
        key,
        command,
        "config",
        record.get("sha256") == digest,
        digest,
        str(record.get("command")) if record.get("command") is not None else "",
        record.get("allowed_at"),
        files,
    )


def statuses(root: Path, config: Config) -> list[CommandStatus]:
    """Every command key of the vault, set or not."""
    return [status(root, config, key) for key in COMMAND_KEYS]


def allow(root: Path, config: Config, key: str) -> CommandStatus:
    """Let ``key``'s current command run in this vault, for this user; a changed command
    needs allowing again. Raises :class:`ConfigError` when no command is set."""
    found = status(root, config, key)
    if found.command is None:
        raise ConfigError("not set: nothing to allow", CONFIG_PATH, key)
    if found.source == "local":
        return found  # set on this machine: it runs as it is
    record(root, key, found.command)
    return status(root, config, key)


def record(root: Path, key: str, command: str) -> None:
    """Write down that this user allowed ``command`` for ``key`` in the vault at ``root``."""
    from .memory import format_time, now_utc

    vaults = _read()
    entry = vaults.setdefault(_vault_key(root), {})
    entry[check_key(key)] = {
        "sha256": command_hash(key, command),
        "command": command,
        "allowed_at": format_time(now_utc()),
    }
    _write(vaults)


def revoke(root: Path, config: Config, key: str) -> CommandStatus:
    """Forget that this user allowed ``key``'s command in this vault (it stops running)."""
    check_key(key)
    vaults = _read()
    entry = vaults.get(_vault_key(root))
    if isinstance(entry, dict) and key in entry:
        del entry[key]
        _write(vaults)
    return status(root, config, key)


def _vault_files(root: Path, command: str) -> tuple[str, ...]:
    """The words of ``command`` naming a file inside the vault (relative to it, or to the
    folder the command runs from): their content is not covered by the hash."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    base = Path(root).resolve()
    found: list[str] = []
    for word in words:
        if not word or word.startswith("-"):
            continue
        candidate = Path(word).expanduser()
        for place in (candidate,) if candidate.is_absolute() else (base / word, Path.cwd() / word):
            try:
                real = place.resolve()
                inside = real.is_relative_to(base) and real.is_file()
            except OSError:
                continue
            if inside:
                found.append(real.relative_to(base).as_posix())
                break
    return tuple(dict.fromkeys(found))
