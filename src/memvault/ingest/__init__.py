"""Transcripts in, insights out: the conversation side of an agent's memory.

``ingest_file`` imports a conversation transcript as session turns (short-term memory,
one episodic file per session, see :mod:`memvault.transcripts`). Two formats, read by
:mod:`.formats`:

- generic JSONL, one turn per line: ``{"role": "user", "content": "...", "timestamp": "..."}``
  (``content`` may also be a list of ``{"type": "text", "text": ...}`` blocks; optional
  ``id``, ``session``, ``rating`` and ``context`` keys are used when present);
- Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``): lines with
  ``type: user|assistant`` and ``message: {role, content}``; only the conversation's text
  is kept (tool calls, tool results, thinking and meta lines are left out).

Every turn gets a stable id (the line's ``uuid``/``id``, else a hash of role, time and
text), so ingesting the same file twice adds nothing and makes no commit. Bad lines are
reported as ``file:line`` problems and skipped; the rest is imported.

:func:`log_usage` and :func:`insights` are the seed's ``logAgentUsage`` and
``getAgentInsights``: a rated agent reply is a logged turn with ``rating`` (and
``context``), and insights are read back from the transcripts the identity can see
(:mod:`.ratings`).

>>> from memvault import Vault                                          # doctest: +SKIP
>>> report = vault.ingest(Path("session.jsonl"))                        # doctest: +SKIP
>>> vault.insights(agent="cfo", topic="pricing")["summary"]             # doctest: +SKIP

A service: works on a :class:`~memvault.core.Core` (``Vault.ingest``, ``Vault.log_turn``,
``Vault.insights``). May import search, the store, the model and the base.
"""

from __future__ import annotations

from .formats import FORMATS, RATINGS, ParsedTranscript, detect_format, read_transcript
from .ratings import insights
from .turns import IngestReport, ingest_file, log_turn, log_usage

__all__ = [
    "FORMATS",
    "RATINGS",
    "IngestReport",
    "ParsedTranscript",
    "detect_format",
    "ingest_file",
    "insights",
    "log_turn",
    "log_usage",
    "read_transcript",
]
