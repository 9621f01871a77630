"""Merging memvault's entries into a client's JSON configuration, keeping the user's own.

The rules, the same for every file:

- memvault's own entries (the ``memvault`` MCP server, memvault's hooks) are brought up to
  date in place; an earlier version of a memvault hook is recognised and replaced, not
  duplicated;
- everything else is kept as it is: other servers, other hooks, other permission rules,
  unknown keys, their order;
- permission rules are only ever added; an environment variable the user set to another
  value is kept, and said so;
- a merge that changes nothing gives back an equal document, so installing twice writes
  nothing the second time.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from .entries import ASK_COMMANDS, ASK_TOOLS, SERVER

Json = dict[str, Any]

# A hook command memvault wrote, in any version, run by name or by path
# (`/venv/bin/memvault`, quoted when it has spaces): `memvault [options] ingest --hook ...` or
# a context hook (`context --hook`, or the old `context "$(basename "$CLAUDE_PROJECT_DIR")"`).
OWN_HOOK = re.compile(
    r"^\s*(?:'[^']*/memvault'|(?:[^\s']*/)?memvault)(?=\s)[^|;&]*\s"
    r"(ingest\s+--hook\b|context\s+--hook\b"
    r'|context\s+"\$\(basename\s+"\$CLAUDE_PROJECT_DIR"\)")'
)
# Rules older memvault versions shipped that approve every tool or command, forget included.
BROAD_RULES = (f"mcp__{SERVER}", f"mcp__{SERVER}__*", "Bash(memvault:*)", "Bash(memvault *)")


def parse_json(text: str, where: str) -> Json:
    """A client's configuration file as a JSON object; a one-line error naming the file."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno});"
            " fix it by hand, nothing was written",
            where,
        ) from None
    if not isinstance(data, dict):
        raise ValidationError(f"expected a JSON object, got {type(data).__name__}", where)
    return data


def render_json(data: Json) -> str:
    """How memvault writes a JSON file: two-space indents, as the clients do, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def child(doc: Json, key: str, kind: type, where: str, path: str) -> Any:
    """``doc[key]``, created empty when missing; the wrong type is an error naming the key."""
    if key not in doc or doc[key] is None:
        doc[key] = kind()
    value = doc[key]
    if not isinstance(value, kind):
        expected = "an object" if kind is dict else "a list"
        raise ValidationError(
            f"expected {expected}, got {type(value).__name__}; nothing was written", where, path
        )
    return value


def merge_server(doc: Json, entry: Json, where: str, notes: list[str]) -> Json:
    """``doc`` with ``mcpServers.memvault`` set to ``entry``; other servers untouched."""
    out = copy.deepcopy(doc)
    servers = child(out, "mcpServers", dict, where, "mcpServers")
    if SERVER in servers and servers[SERVER] != entry:
        notes.append(f"{where}: brought mcpServers.{SERVER} up to date (see the diff)")
    servers[SERVER] = copy.deepcopy(entry)
    return out


def merge_settings(doc: Json, ours: Json, where: str, notes: list[str]) -> Json:
    """Claude Code's settings.json with memvault's env, permissions and hooks merged in."""
    out = copy.deepcopy(doc)
    env = child(out, "env", dict, where, "env")
    for key, value in ours["env"].items():
        if key not in env:
            env[key] = value
        elif env[key] != value:
            notes.append(
                f"{where}: env.{key} is {env[key]!r}; kept it (memvault would set {value!r})"
            )
    permissions = child(out, "permissions", dict, where, "permissions")
    for kind, rules in ours["permissions"].items():
        have = child(permissions, kind, list, where, f"permissions.{kind}")
        have.extend(rule for rule in rules if rule not in have)
    broad = [r for r in permissions.get("allow", []) if r in BROAD_RULES]
    if broad:
        notes.append(
            f"{where}: permissions.allow has {', '.join(broad)}, which approves every memvault"
            f" tool or command; the ask rules still keep the tools {', '.join(ASK_TOOLS)} and"
            f" the commands {', '.join(ASK_COMMANDS)} asking"
        )
    hooks = child(out, "hooks", dict, where, "hooks")
    for event, groups in ours["hooks"].items():
        merge_hook(child(hooks, event, list, where, f"hooks.{event}"), groups[0], where, event)
    return out


def own_hook(entry: Any) -> bool:
    command = entry.get("command") if isinstance(entry, Mapping) else None
    return isinstance(command, str) and OWN_HOOK.match(command) is not None


def merge_hook(groups: list[Any], ours: Json, where: str, event: str) -> None:
    """Put memvault's hook group into ``groups`` (one event's list), in place.

    An earlier memvault hook is replaced where it stands (its group keeps its place and its
    other hooks); further copies are removed, and so is a group left holding nothing else;
    without an earlier one, memvault's group is appended.
    """
    [hook] = ours["hooks"]
    placed = False
    merged: list[Any] = []
    for i, group in enumerate(groups):
        if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
            raise ValidationError(
                "expected {matcher, hooks: [...]}; nothing was written",
                where,
                f"hooks.{event}[{i}]",
            )
        if not any(own_hook(entry) for entry in group["hooks"]):
            merged.append(group)
            continue
        kept = []
        for entry in group["hooks"]:
            if not own_hook(entry):
                kept.append(entry)
            elif not placed:
                kept.append(copy.deepcopy(hook))
                placed = True
        if not kept:
            continue
        updated = {**group, "hooks": kept}
        if kept == [hook] and "matcher" in ours:
            updated["matcher"] = ours["matcher"]
        merged.append(updated)
    if not placed:
        merged.append(copy.deepcopy(ours))
    groups[:] = merged


# --- uninstall ----------------------------------------------------------------------------


def remove_server(doc: Json, where: str, notes: list[str]) -> Json:
    """``doc`` without ``mcpServers.memvault`` (and without ``mcpServers`` left empty)."""
    out = copy.deepcopy(doc)
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del out["mcpServers"]
    return out


def remove_settings(doc: Json, ours: Json, where: str, notes: list[str]) -> Json:
    """Claude Code's settings.json without what :func:`merge_settings` added: memvault's
    hooks (any version), its permission rules, and env values equal to the ones it sets (a
    value the user set otherwise was kept at install and is kept now). A key left empty by
    the removal goes too; the user's own entries stay in their order."""
    out = copy.deepcopy(doc)
    env = out.get("env")
    if isinstance(env, dict):
        for key, value in ours["env"].items():
            if env.get(key) == value:
                del env[key]
            elif key in env:
                notes.append(f"{where}: env.{key} is {env[key]!r}, not memvault's; kept it")
    permissions = out.get("permissions")
    if isinstance(permissions, dict):
        for kind, rules in ours["permissions"].items():
            have = permissions.get(kind)
            if isinstance(have, list):
                have[:] = [rule for rule in have if rule not in rules]
        drop_empty(permissions, list(ours["permissions"]))
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        for event in ours["hooks"]:
            groups = hooks.get(event)
            if not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                if isinstance(group, Mapping) and isinstance(group.get("hooks"), list):
                    entries = [entry for entry in group["hooks"] if not own_hook(entry)]
                    if not entries:
                        continue
                    if len(entries) != len(group["hooks"]):
                        group = {**group, "hooks": entries}
                kept.append(group)
            groups[:] = kept
        drop_empty(hooks, list(ours["hooks"]))
    drop_empty(out, ["env", "permissions", "hooks"])
    return out


def drop_empty(doc: Json, keys: list[str]) -> None:
    """Remove those of ``keys`` whose value is now an empty object or list."""
    for key in keys:
        if isinstance(doc.get(key), dict | list) and not doc[key]:
            del doc[key]
