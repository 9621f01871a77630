"""What an agent client's hooks ask of memory: context for the prompt the user just sent
(Claude Code's ``UserPromptSubmit``) or for a session starting (``SessionStart``), as the
hook JSON the client reads (``hookSpecificOutput.additionalContext``).

A prompt is its own question. A session start has none, so one is made from the project:
its README's title, its git remote's name and the files changed in its last commits (the
folder's name alone, the old question, recalled mostly unrelated facts). When nothing in
memory clears the relevance floor the hook prints nothing, and the agent's prompt is left
as it was.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import MemvaultError

if TYPE_CHECKING:  # pragma: no cover
    from .search.context import ContextBlock

EVENTS = ("UserPromptSubmit", "SessionStart")
MAX_PROMPT = 2000  # characters of a prompt searched for (a pasted file is mostly noise)
_README = ("README.md", "README.rst", "README.txt", "README")
_TITLE = re.compile(r"^\s*(?:#+\s+|=+\s*$)?(.+?)\s*#*\s*$")


def question(payload: Mapping[str, Any]) -> tuple[str, str]:
    """The hook's event and the question to recall for. Raises a one-line
    :class:`MemvaultError` naming the key when the payload can't say."""
    # Clients name the event; a bare call (no JSON) is a session start, as the old hook was.
    event = payload.get("hook_event_name") or (
        "UserPromptSubmit" if "prompt" in payload else "SessionStart"
    )
    if event not in EVENTS:
        raise MemvaultError(
            f"expected {'|'.join(EVENTS)}, got {event!r}", "<stdin>", "hook_event_name"
        )
    if event == "UserPromptSubmit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise MemvaultError("expected the prompt's text", "<stdin>", "prompt")
        return event, " ".join(prompt[:MAX_PROMPT].split())
    cwd = payload.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR")
    folder = Path(cwd) if isinstance(cwd, str) and cwd else Path(os.getcwd())
    return event, project_question(folder)


def project_question(folder: Path) -> str:
    """Words that say what a project is about: its README's title, its git remote's
    repository name, the names of the files its last commits changed; the folder's name
    when it has none of these."""
    parts = [readme_title(folder), remote_name(folder), *recent_files(folder)]
    words: list[str] = []
    for part in parts:
        for word in (part or "").split():
            if word.lower() not in (w.lower() for w in words):
                words.append(word)
    return " ".join(words)[:300] or folder.name


def readme_title(folder: Path) -> str | None:
    for name in _README:
        path = folder / name
        if not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:40]
        except OSError:
            return None
        for line in lines:
            text = line.strip()
            if text and not text.startswith(("<", "[!", "![", "```", "---")):
                match = _TITLE.match(text)
                return match.group(1)[:120] if match else None
    return None


def _git(folder: Path, *args: str) -> str:
    """git's output in the project's folder, or "" (not a repository, no git)."""
    from .errors import GitError
    from .store.git.process import run_git

    try:
        result = run_git(folder, args, check=False)
    except GitError:
        return ""
    return result.stdout if result.returncode == 0 else ""


def remote_name(folder: Path) -> str | None:
    url = _git(folder, "config", "--get", "remote.origin.url").strip()
    name = re.split(r"[/:]", url.rstrip("/"))[-1] if url else ""
    return name.removesuffix(".git").replace("-", " ").replace("_", " ") or None


def recent_files(folder: Path, commits: int = 20, keep: int = 5) -> list[str]:
    """The stems of the files the last ``commits`` commits changed most often."""
    names = _git(folder, "log", f"-n{commits}", "--name-only", "--format=").split("\n")
    stems = Counter(Path(n).stem.replace("_", " ").replace("-", " ") for n in names if n.strip())
    return [stem for stem, _ in stems.most_common(keep) if stem]


def output(event: str, block: ContextBlock) -> dict[str, Any] | None:
    """The JSON the client reads, or None when nothing relevant was found (print nothing)."""
    if not block.included:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": block.text}}
