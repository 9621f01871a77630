"""Procedures that fail often get a review proposal (seed 004's *optimize*).

A procedure in force with at least ``consolidate.review_min_uses`` (4) recorded uses and a
``success_rate`` under ``consolidate.review_below`` (0.5) gets a proposal in ``inbox/``: the
same procedure, with ``supersedes`` naming it, and a body that says how often it failed and
what the failures' notes said (``memvault procedure used ID --outcome failure --note ...``
puts them in the commit messages of the procedure's file). A person edits the steps and
accepts it; accepting supersedes the failing procedure (its tombstone is kept). A rejected
review is not proposed again until the procedure is used more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ValidationError
from ..paths import CONFIG_PATH
from ..review import rejected_evidence
from .model import Plan, State
from .promote import add_proposal, derived_key, proposal_meta, same_owner

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core
    from ..memory import Memory

DEFAULT_MIN_USES = 4
DEFAULT_BELOW = 0.5
NOTES_SHOWN = 5  # failure notes quoted in a proposal, newest first


def plan_optimize(vault: Core, state: State, result: Plan) -> None:
    """Propose a review of each procedure in force that fails too often."""
    min_uses = int(_setting(vault, "review_min_uses", DEFAULT_MIN_USES))
    below = _setting(vault, "review_below", DEFAULT_BELOW)
    proposed = {str(m.meta.get("derived_key")) for m in state.memories if m.meta.get("derived_key")}
    taken = {m.id for m in state.memories}
    rejected = rejected_evidence(vault.root)
    for proc in state.memories:
        if proc.type != "procedural" or not state.live(proc):
            continue
        uses, rate = _numbers(proc)
        if uses < min_uses or rate is None or rate >= below:
            continue
        evidence = [proc.id, f"{proc.id}@uses-{uses}"]
        key = derived_key("review", [proc.id])
        if key in proposed or any(seen.issuperset(evidence) for seen in rejected):
            continue
        failed = round(uses * (1 - rate))
        meta = proposal_meta(
            "procedural", proc.category, proc.title, evidence, key, result.now, taken
        )
        same_owner(meta, proc)
        meta["supersedes"] = proc.id
        for name in ("steps", "trigger", "tags"):
            if proc.meta.get(name):
                meta[name] = proc.meta[name]
        why = f"{proc.id} failed {failed} of {uses} uses (review_below {below})"
        body = _body(vault, proc, uses, failed, rate)
        add_proposal(vault, result, meta, body, why, step="optimize")
        proposed.add(key)


def _setting(vault: Core, name: str, default: float) -> float:
    value = vault.config.get(f"consolidate.{name}", default)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValidationError(
            f"consolidate.{name}: expected a number, got {value!r}", CONFIG_PATH, name
        ) from None


def _numbers(proc: Memory) -> tuple[int, float | None]:
    try:
        uses = int(proc.meta.get("times_used") or 0)
        rate = proc.meta.get("success_rate")
        return uses, None if rate is None else float(rate)
    except (TypeError, ValueError):  # a hand-written value that is not a number
        return 0, None


def _body(vault: Core, proc: Memory, uses: int, failed: int, rate: float) -> str:
    """The procedure as it stands, then why it is up for review (a person edits both)."""
    lines = [
        proc.content.strip(),
        "",
        "## Why this review",
        "",
        f"{proc.id} failed {failed} of its {uses} recorded uses (success rate {rate:.0%}). "
        "Revise the steps, delete this section and accept to replace it (the old version is "
        "kept as superseded), or reject to keep the procedure as it is.",
    ]
    notes = failure_notes(vault, proc)
    if notes:
        lines += ["", "What the failures said (newest first):", *(f"- {n}" for n in notes)]
    return "\n".join(lines)


def failure_notes(vault: Core, proc: Memory) -> list[str]:
    """The notes of the procedure's recorded failures, from its file's commit messages."""
    from ..store.git.process import run_git

    marker = f"memvault: used {proc.id}: failure: "
    proc_log = run_git(
        vault.root, ["log", "--format=%s", "-n", "200", "--", proc.path], check=False
    )
    counts: dict[str, int] = {}
    for subject in proc_log.stdout.splitlines():
        if subject.startswith(marker):
            note = subject[len(marker) :].strip()
            counts[note] = counts.get(note, 0) + 1
    return [f"{n} ({c}×)" if c > 1 else n for n, c in list(counts.items())[:NOTES_SHOWN]]


__all__ = ["failure_notes", "plan_optimize"]
