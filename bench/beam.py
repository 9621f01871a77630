"""BEAM conversations as the conversation bench reads them (``bench/locomo.py --data DIR``).

BEAM (Tavakoli et al., "Beyond a Million Tokens", 2025) comes from
https://github.com/mohammadtavakoli78/BEAM; its 128K-token set is the folder ``chats/100K``:
one folder per conversation (``1`` .. ``20``), each holding

* ``chat.json``: a list of batches ``{batch_number, time_anchor, turns}``, ``turns`` a list
  of exchanges, each a list of messages ``{role: user|assistant, id, content}``; the first
  message of a batch carries ``time_anchor`` (``"March-15-2024"``);
* ``probing_questions.json``: ``{ability: [question, ...]}`` for ten abilities, each question
  with ``source_chat_ids`` (message ids: a list, possibly nested, or a dict of lists such as
  ``{original_info, updated_info}`` for knowledge_update), except abstention's.

How it becomes transcripts, the way an agent's log holds a chat: each exchange (a user's
question and what followed it, 2-6 messages) is one session; a message is a turn with its
role and no speaker name, timestamped at its batch's date, noon UTC, plus one minute per
message of the batch. The `` ->-> 1,1`` marker the generator put at the end of user messages
is cut (no user types it). Every question is kept: those with evidence are scored (their
evidence is all their message ids); abstention questions, which have none, are asked for
the lifecycle figures; knowledge_update's ``original_info`` and ``updated_info`` ids are the
older and the newer value.

Split: a conversation is ``tune`` when sha256("beam:<folder name>") mod 100 < 40 (the rule of
the other public sets, ``public_retrieval.hash_split``): 1, 2, 5, 9, 10, 11, 12, 19, 20 tune;
3, 4, 6, 7, 8, 13-18 held out.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from conversations import BenchError, Conversation, DataSet, Question, Session, Turn
from public_retrieval import hash_split

ABILITIES = (
    "information_extraction",
    "multi_session_reasoning",
    "knowledge_update",
    "temporal_reasoning",
    "event_ordering",
    "contradiction_resolution",
    "instruction_following",
    "preference_following",
    "summarization",
    "abstention",
)
SPLIT_RULE = (
    "BEAM conversations by folder: tune when sha256('beam:<folder>') mod 100 < 40 "
    "(1, 2, 5, 9, 10, 11, 12, 19, 20), the rest held out"
)
_MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")


def is_beam(path: Path) -> bool:
    """A folder of BEAM conversations (or one conversation's folder)."""
    return path.is_dir() and bool(folders(path))


def folders(path: Path) -> list[Path]:
    if (path / "chat.json").is_file():
        return [path]
    found = [p for p in path.iterdir() if (p / "chat.json").is_file()]
    # 1, 2, ..., 10, 11: numbered folders in number order, any others after them by name
    return sorted(found, key=lambda p: (0, int(p.name), "") if p.name.isdigit() else (1, 0, p.name))


def anchor(value: Any) -> dt.datetime | None:
    """``"March-15-2024"`` -> noon UTC of that day (None if it doesn't parse)."""
    try:
        day = dt.datetime.strptime(str(value), "%B-%d-%Y")
    except ValueError:
        return None
    return day.replace(hour=12, tzinfo=dt.UTC)


def ids_in(value: Any) -> list[int]:
    """Message ids in a ``source_chat_ids`` value: a list (possibly nested) or a dict of them."""
    if isinstance(value, dict):
        return [i for v in value.values() for i in ids_in(v)]
    if isinstance(value, list):
        return [i for v in value for i in ids_in(v)]
    return [value] if isinstance(value, int) and not isinstance(value, bool) else []


def dia(message_id: int) -> str:
    return f"m{message_id}"


def sessions_of(chat: list[dict[str, Any]], where: str) -> list[Session]:
    sessions: list[Session] = []
    when = dt.datetime(2000, 1, 1, 12, tzinfo=dt.UTC)
    for batch in chat:
        start: dt.datetime | None = None
        i = 0
        for exchange in batch.get("turns") or []:
            turns = []
            for m in exchange:
                if start is None:
                    start = anchor(m.get("time_anchor") or batch.get("time_anchor")) or when
                text = _MARKER.sub("", str(m.get("content") or "")).strip()
                if text:
                    turns.append(
                        Turn(dia(m["id"]), "", text, start + dt.timedelta(minutes=i), m["role"])
                    )
                i += 1
            if turns:
                sessions.append(Session(len(sessions) + 1, turns))
        if start is not None:
            when = start
    if not sessions:
        raise BenchError(f"{where}: no messages")
    return sessions


def questions_of(probing: dict[str, Any], known: set[str]) -> list[Question]:
    out = []
    for ability, items in probing.items():
        for item in items:
            sources = item.get("source_chat_ids")
            evidence = sorted({dia(i) for i in ids_in(sources)} & known)
            if ability != "abstention" and not evidence:
                continue  # evidence the conversation doesn't hold: nothing to score
            older = newer = []
            if ability == "knowledge_update" and isinstance(sources, dict):
                older = [d for d in map(dia, ids_in(sources.get("original_info"))) if d in known]
                newer = [d for d in map(dia, ids_in(sources.get("updated_info"))) if d in known]
            out.append(Question(str(item["question"]), ability, evidence, older, newer))
    return out


def load(path: Path) -> DataSet:
    """The conversations of a BEAM folder (``chats/100K`` or one conversation's folder)."""
    conversations = []
    for index, folder in enumerate(folders(path)):
        where = str(folder)
        try:
            chat = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
            probing = json.loads((folder / "probing_questions.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BenchError(f"{where}: {exc}") from exc
        sessions = sessions_of(chat, where)
        known = {t.dia_id for s in sessions for t in s.turns}
        questions = questions_of(probing, known)
        split = "tune" if hash_split("beam", folder.name) == "tune" else "heldout"
        conversations.append(Conversation(f"beam-{folder.name}", index, sessions, questions, split))
    present = {q.cat for c in conversations for q in c.questions if q.evidence}
    order = [a for a in ABILITIES if a in present] + sorted(
        str(c) for c in present - set(ABILITIES)
    )
    return DataSet("beam", str(path), conversations, {a: a for a in order}, SPLIT_RULE)
