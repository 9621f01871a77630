"""A judge of your own for ``validate``: ``validate.judge_command`` (an LLM behind a script,
say) gets the statement and the facts found, and answers the verdict.

The protocol mirrors ``consolidate.summarizer_command``: the command line is split like a
shell would (no shell runs), gets one JSON object on stdin and must print one JSON object
on stdout within ``validate.judge_timeout`` seconds (default 60), exit status 0:

stdin::

    {"protocol": 1, "statement": "...", "claim": "...", "as_of": null,
     "facts": [{"id", "title", "text", "subject", "status", "in_force", "valid_from",
                "valid_to", "superseded_by"}, ...],
     "builtin": {"verdict", "why", "evidence_id", "slot"}}

stdout::

    {"verdict": "supported|contradicted|unknown", "why": "...", "evidence_id": "<fact id>"}

Only facts with ``in_force`` true may decide (a superseded one shows what used to be
true). ``evidence_id`` is optional and must name one of the facts sent. Anything else -- a
non-zero exit, a timeout, output that is not such an object -- is a failure: ``validate``
keeps its built-in verdict and says so in the result (``judge.status: "failed"``).

A command from the tracked config runs only once the user on this machine allowed it
(:mod:`memvault.trust`, ``memvault allow-command``); until then the built-in verdict stands
and the result's ``note`` says why (``judge.status: "not allowed"``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..store.repository import Repository
    from ..trust import CommandStatus

VERDICTS = ("supported", "contradicted", "unknown")
DEFAULT_TIMEOUT = 60.0


def judge_command(vault: Repository) -> CommandStatus:
    """``validate.judge_command`` and whether it may run here (:func:`memvault.trust.status`)."""
    from ..trust import status

    return status(vault.root, vault.config, "validate.judge_command")


class JudgeFailed(Exception):
    """The judge command did not give a usable answer (the message says why)."""


def ask_judge(
    command: str, payload: Mapping[str, Any], timeout: float = DEFAULT_TIMEOUT
) -> dict[str, Any]:
    """Run ``command`` with ``payload`` on stdin; the checked answer (verdict, why,
    evidence_id). Raises :class:`JudgeFailed`."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise JudgeFailed(f"cannot split the command line: {exc}") from None
    if not argv:
        raise JudgeFailed("empty command")
    try:
        proc = subprocess.run(
            argv,
            input=json.dumps(payload, ensure_ascii=False, default=str),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise JudgeFailed(f"no answer within {timeout:g} s") from None
    except OSError as exc:
        raise JudgeFailed(f"cannot run it: {exc}") from None
    if proc.returncode != 0:
        raise JudgeFailed(f"exit {proc.returncode}: {proc.stderr.strip()[:200]}")
    ids = [str(f.get("id")) for f in payload.get("facts", ())]
    return parse_answer(proc.stdout, ids)


def parse_answer(stdout: str, fact_ids: Sequence[str]) -> dict[str, Any]:
    """The judge's answer, checked: a JSON object with a known verdict, and an
    ``evidence_id`` (if any) among the facts it was given."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        raise JudgeFailed(f"output is not JSON: {stdout.strip()[:120]!r}") from None
    if not isinstance(answer, dict):
        raise JudgeFailed("output is not a JSON object")
    verdict = answer.get("verdict")
    if verdict not in VERDICTS:
        raise JudgeFailed(f"verdict must be one of {'|'.join(VERDICTS)}, got {verdict!r}")
    evidence = answer.get("evidence_id")
    if evidence is not None and str(evidence) not in fact_ids:
        raise JudgeFailed(f"evidence_id {evidence!r} is not one of the facts sent")
    why = answer.get("why")
    return {
        "verdict": verdict,
        "why": str(why) if why else "the judge decided",
        "evidence_id": None if evidence is None else str(evidence),
    }
