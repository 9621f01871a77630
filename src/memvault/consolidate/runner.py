"""Planning and applying a consolidation: the plan is pure, applying it is one commit.

:func:`plan` reads files, the access log and vectors and writes nothing; :func:`apply`
performs a plan under the vault lock as exactly one commit and appends an entry to the
tracked ``.memvault/consolidation.log``.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MemvaultError
from ..memory import Memory, format_time, now_utc
from ..paths import ALL_TREES, CONSOLIDATION_LOG, USAGE_PATH
from ..store.catalog import sha256_bytes
from ..store.files import Document, load_document, parse_text, rewritten_memory, update_text
from .compare import forget_texts
from .decay import config_rates, decay_name, plan_decay
from .dedup import plan_dedup
from .distill import plan_distill
from .fold import Accesses, drop_parked_log, park_access_log, plan_fold
from .model import STEPS, Action, Plan, Progress, State
from .optimize import plan_optimize
from .promote import plan_promote
from .retention import plan_retention
from .supersede import newer_wins_after, plan_disputes, plan_supersede

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core

# Keys whose change alone does not count as an edit of the memory (no new ``updated``).
# Consolidation keeps them in the usage file; a file may still hold them (older vaults).
BOOKKEEPING_KEYS = frozenset({"relevance", "access_count", "last_accessed"})
MESSAGE_ACTIONS = 200  # decisions listed in the commit message; the log holds them all
SUMMARY_LINES = 15  # the commit message opens with at most this many lines
SUMMARY_IDS = 4  # ids named per line of the summary


def plan(
    vault: Core,
    now: dt.datetime | None = None,
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
    writer: bool = False,
    texts: bool = True,
) -> Plan:
    """Work out everything a consolidation would do, without writing anything.

    ``writer``: the caller holds the vault lock, so the search index (where the
    neighbours for dedup and promotion come from) may be brought up to date first.
    ``texts``: render the files it would write (``Plan.writes``; for a diff or an apply);
    without, the plan says what and why (a first consolidation of an imported vault
    rewrites most of its files, and reading and rendering them is much of its time).
    """
    steps = set(only or STEPS)
    unknown = steps - set(STEPS)
    if unknown:
        raise MemvaultError(
            f"unknown step(s) {', '.join(repr(s) for s in sorted(unknown))}; "
            f"expected {','.join(STEPS)}",
            key="only",
        )
    from ..store.usage import load as load_usage

    result = Plan(now=now or now_utc())
    memories = vault.all_memories()
    result.held = uncommitted(vault.root)
    state = State(memories, writer, load_usage(vault.root))
    accesses: Accesses = {}
    if "fold" in steps:
        rates, defaults = config_rates(vault.config)
        accesses = plan_fold(
            vault.root, state, result, lambda m: rates.get(decay_name(m, defaults), 1.0)
        )
    if "decay" in steps:
        plan_decay(vault, state, result, accesses)
    if "retention" in steps:
        plan_retention(vault, state, result)
    if "supersede" in steps:
        plan_supersede(state, result)
        after = newer_wins_after(vault.config.get("disputes.newer_wins_after"))
        plan_disputes(state, result, after)
    if "dedup" in steps:
        plan_dedup(vault, state, result, progress)
    if "promote" in steps:
        plan_promote(vault, state, result, progress)
    if "optimize" in steps:
        plan_optimize(vault, state, result)
    if "distill" in steps:
        plan_distill(vault, state, result)
    result.neighbours = state.neighbour_reports
    records = state.usage_after()
    if records != state.usage:
        result.usage = records
    if texts:
        render(vault, state, result)
    forget_texts()  # the word caches hold every memory's text: free them for a server
    return result


def uncommitted(root: Path) -> list[str]:
    """Memory files that differ from HEAD (edited, staged, deleted or never committed).

    Consolidation commits what it rewrites, and a run reads every memory (an inbox proposal
    it would propose again, a keeper it would merge into): a hand edit not committed yet
    would go into its commit, or be written over. So a run is not applied while there is
    one (:func:`apply` refuses the plan); a dry run names them."""
    from ..store.git.ops import differing_paths
    from ..store.tree import is_listed

    # Ignored files are left out: git would never commit them, so they are nobody's pending work.
    differing = differing_paths(root, [f"{tree}/" for tree in ALL_TREES], ignored=False)
    return sorted(p for p in differing or () if is_listed(p.rsplit("/", 1)[-1]))


def render(vault: Core, state: State, result: Plan) -> None:
    """Fill ``result.writes`` and ``result.moves`` from the state's changes and moves."""
    stamp = format_time(result.now)
    shas = vault.catalog.shas()  # what the memories were read from (see _document)
    for mid, changes in state.changes.items():
        m = state.by_id[mid]
        if not changes:
            continue
        doc = _document(vault, m, shas.get(m.path))
        real = {k: v for k, v in changes.items() if doc.meta.get(k) != v}
        if not real:
            continue
        edited = bool(set(real) - BOOKKEEPING_KEYS)
        final = {**real, "updated": stamp} if edited else real
        text = update_text(doc, final)
        dst = state.moves.get(mid, m.path)
        result.writes[dst] = text
        known = rewritten_memory(doc, final, dst)
        if known is not None:
            result.known[dst] = known
        if dst != m.path:
            result.moves[m.path] = dst
    for mid, dst in state.moves.items():
        m = state.by_id[mid]
        if m.path not in result.moves:
            result.moves[m.path] = dst
            result.writes.setdefault(dst, (vault.root / m.path).read_text(encoding="utf-8"))
    result.writes.update(result.new_files)
    if result.usage is not None:
        from ..store.usage import render as render_usage

        result.writes[USAGE_PATH] = render_usage(result.usage)


def _document(vault: Core, m: Memory, sha: str | None) -> Document:
    """A memory's file, split for a rewrite. When its bytes are still those the memory was
    read from (by hash), the memory's front matter is used as it is: a first consolidation
    of a large vault rewrites most of its memories, and parsing each again would be a YAML
    parse per file on top of the rewrite."""
    path = vault.root / m.path
    if sha and m.path.endswith(".md"):
        data = path.read_bytes()
        if sha256_bytes(data) == sha:
            return parse_text(data.decode("utf-8"), m.path, dict(m.meta))
    return load_document(path, m.path)


def log_entry(result: Plan) -> dict[str, Any]:
    """What the consolidation log records of a run."""
    return {
        "ts": format_time(result.now),
        "summary": result.summary(),
        "counts": result.counts(),
        "folded_sha": result.folded_sha,
        "actions": [
            {"step": a.step, "id": a.memory_id, "what": a.what, "why": a.why}
            for a in result.actions
        ],
    }


def commit_message(result: Plan) -> str:
    """The run's commit message: a summary of at most :data:`SUMMARY_LINES` lines (what was
    decided, by kind, with a few ids each; reads and relevance in one line), then each
    decision with its reason. The log holds every action."""
    decisions = [a for a in result.actions if not a.usage_only]
    groups: dict[str, list[Action]] = {}
    for a in decisions:
        groups.setdefault(a.what.split(" ")[0], []).append(a)
    lines = [f"memvault: consolidate ({format_time(result.now)}): {result.summary()}", ""]
    for verb, acts in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ids = [a.memory_id for a in acts[:SUMMARY_IDS]]
        more = f", and {len(acts) - SUMMARY_IDS} more" if len(acts) > SUMMARY_IDS else ""
        lines.append(f"{verb} {len(acts)}: {', '.join(ids)}{more}")
    if result.new_files:
        names = sorted(result.new_files)
        more = f", and {len(names) - SUMMARY_IDS} more" if len(names) > SUMMARY_IDS else ""
        lines.append(f"new files {len(names)}: {', '.join(names[:SUMMARY_IDS])}{more}")
    read = sum(1 for a in result.actions if a.step == "fold")
    decayed = sum(1 for a in result.actions if a.usage_only and a.step != "fold")
    if read or decayed:
        lines.append(
            f"usage ({USAGE_PATH}): reads of {read} memories folded, relevance of {decayed} updated"
        )
    if len(lines) > SUMMARY_LINES:  # more kinds than fit: the log names them all
        lines[SUMMARY_LINES - 1 :] = [f"… see {CONSOLIDATION_LOG} for the rest"]
    body = "\n".join(
        f"- {a.step}: {a.memory_id}: {a.what} ({a.why})" for a in decisions[:MESSAGE_ACTIONS]
    )
    if len(decisions) > MESSAGE_ACTIONS:
        body += f"\n- … and {len(decisions) - MESSAGE_ACTIONS} more (see {CONSOLIDATION_LOG})"
    return "\n".join(lines) + (f"\n\n{body}" if body else "")


def apply(vault: Core, result: Plan) -> str | None:
    """Perform a plan as one commit (call with the vault lock held). Refused, nothing
    written, when the plan found memory files with uncommitted edits."""
    if result.held:
        raise _held_error(result.held)
    if result.empty and not result.folded_records:
        return None
    log_path = vault.root / CONSOLIDATION_LOG
    old_log = log_path.read_text(encoding="utf-8") if log_path.exists() else ""
    writes = dict(result.writes)
    sha = None
    # Fold the access log exactly once: park it, commit (the log entry records the parked
    # file's hash), then drop the parked copy; a run that dies between the commit and the
    # drop leaves a parked file whose hash the next run finds in the log, and skips.
    park_access_log(vault.root, result)
    if not result.empty:
        writes[CONSOLIDATION_LOG] = (
            old_log + json.dumps(log_entry(result), ensure_ascii=False) + "\n"
        )
    # a moved file is written at its destination; remove the source
    removes = [src for src in result.moves if src not in writes]
    if writes or removes:
        known = {rel: m for rel, m in result.known.items() if writes.get(rel) is not None}
        sha = vault.commit_files(writes, commit_message(result), removes=removes, known=known)
    drop_parked_log(vault.root)
    return sha


def consolidate(
    vault: Core,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
    texts: bool = True,
) -> tuple[Plan, str | None]:
    """Plan (and unless ``dry_run``, apply) a consolidation. Returns (plan, commit sha).
    ``texts``: with ``dry_run``, render the files too (for :func:`diff_of`)."""
    if dry_run:
        return plan(vault, now, only, progress, texts=texts), None
    with vault.locked():
        result = plan(vault, now, only, progress, writer=True)
        sha = apply(vault, result)
    return result, sha


def _held_error(held: Sequence[str]) -> MemvaultError:
    shown = ", ".join(held[:5]) + (", ..." if len(held) > 5 else "")
    return MemvaultError(
        f"{len(held)} memory file(s) have uncommitted edits ({shown}): commit or discard "
        "them, then run consolidate again (--dry-run shows the plan meanwhile)",
        key="uncommitted",
    )


def diff_of(vault: Core, result: Plan) -> str:
    """A unified diff of what the plan would change (for --dry-run)."""
    chunks: list[str] = []
    sources = {dst: src for src, dst in result.moves.items()}
    for rel, text in sorted(result.writes.items()):
        src = sources.get(rel, rel)
        old_path = vault.root / src
        old = old_path.read_text(encoding="utf-8") if old_path.exists() else ""
        if old == text and src == rel:
            continue
        before = f"a/{src}" if old else "/dev/null"
        chunks.extend(
            difflib.unified_diff(old.splitlines(True), text.splitlines(True), before, f"b/{rel}")
        )
    return "".join(chunks)
