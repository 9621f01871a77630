"""Usage records (reads and decayed relevance) live in .memvault/usage.jsonl, not in the
memory files: a consolidation commit touches only the memories it decides about."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest

from memvault import Vault
from memvault.consolidate import consolidate
from memvault.consolidate.runner import SUMMARY_LINES
from memvault.paths import USAGE_PATH
from memvault.store.mergedriver import merge_texts, register_driver
from memvault.store.usage import Usage, merge, parse, render

from helpers import git

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
T0S = "2026-01-01T00:00:00Z"


def weeks(n: float) -> dt.datetime:
    return T0 + dt.timedelta(weeks=n)


def log_reads(
    vault: Vault, ids: list[str], when: dt.datetime, weights: list[float] | None = None
) -> None:
    record: dict[str, object] = {
        "ts": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kind": "query",
        "q": "x",
        "ids": ids,
    }
    if weights is not None:
        record["w"] = weights
    with open(vault.root / ".memvault" / "access.log", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def changed_files(root: Path) -> list[str]:
    out = git(root, "show", "--name-only", "--no-renames", "--format=", "HEAD")
    return sorted(line for line in out.splitlines() if line.strip())


def test_a_consolidation_rewrites_only_the_memories_it_decides_about(vault: Vault) -> None:
    kept = [
        vault.add("episodic", f"Deploy {n} of the billing service went fine", created=T0S).memory.id
        for n in range(5)
    ]
    facts = [vault.add("semantic", f"Service {n} runs on port 80{n}").memory.id for n in range(3)]
    junk = vault.add("episodic", "Had a sandwich for lunch", importance=1, created=T0S).memory
    log_reads(vault, kept + facts, weeks(5))
    before = {m.id: (vault.root / m.path).read_bytes() for m in vault.all_memories()}

    plan, sha = consolidate(vault.core, now=weeks(5) + dt.timedelta(hours=1))
    assert sha is not None
    files = changed_files(vault.root)
    # the junk episode is archived (1/5 × 0.8^5 < 0.1: a decision); the eight memories read
    # were decided nothing about: their reads and relevance went to the usage file
    assert files == sorted(
        [".memvault/consolidation.log", USAGE_PATH, junk.path, f"archive/{junk.path}"]
    )
    for m in vault.all_memories():
        if m.id != junk.id:
            assert (vault.root / m.path).read_bytes() == before[m.id]
    assert vault.usage(kept[0]).access_count == 1
    assert vault.usage(facts[0]).last_accessed == "2026-02-05T00:00:00Z"
    assert vault.usage(kept[0]).relevance is not None
    assert "read 1 time(s)" in vault.why(kept[0], now=weeks(5))


def test_weak_reads_do_not_keep_junk_alive(vault: Vault) -> None:
    """A read refreshes relevance in proportion to how well the memory matched: an episode
    that unrelated questions brushed against every week (strength 0.1) is archived on
    schedule, one that was plainly an answer each week (strength 1) is kept."""
    weak = vault.add("episodic", "Lunch delivery arrived late", importance=2, created=T0S).memory
    used = vault.add("episodic", "The printer jammed again", importance=2, created=T0S).memory
    for week in range(1, 8):
        for _ in range(5):  # many weak reads are no more a use than one
            log_reads(vault, [weak.id], weeks(week), [0.1])
        log_reads(vault, [used.id], weeks(week))
    consolidate(vault.core, now=weeks(8))
    after = {m.id: m for m in vault.all_memories()}
    assert after[weak.id].path.startswith("archive/")
    assert not after[used.id].path.startswith("archive/")
    record = vault.usage(weak.id)
    assert record.access_count == 35 and record.last_accessed == "2026-02-19T00:00:00Z"
    # a read of strength 0.1 counts as a full use log(0.1)/log(0.8) = 10.3 weeks before it
    assert record.decays_from == "2026-01-01T00:00:00Z"
    assert vault.usage(used.id).decays_from is None  # full uses: it decays from the last read
    assert "weak matches" in vault.why(weak.id, now=weeks(8))


def test_a_search_logs_how_strongly_each_hit_matched(vault: Vault) -> None:
    from memvault.search.accesslog import read_log, strength

    vault.add("semantic", "The billing database runs on db-bil-12")
    vault.add("semantic", "The billing team meets on Mondays in room 4")
    result = vault.recall("billing database host", min_score=0.2)
    [record] = read_log(vault.root / ".memvault" / "access.log")
    read = [h for h in result.hits[:5] if h.relevance is not None and h.relevance >= 0.2]
    top = max(h.relevance or 0.0 for h in read)
    assert record["ids"] == [h.id for h in read]
    assert record["w"] == [strength(h.relevance, 0.2, top) for h in read]
    assert record["w"][0] > record["w"][-1] >= 0.0
    # on the floor: no use; the same text: a full use; far below the best hit: barely one
    assert strength(0.2, 0.2) == 0.0 and strength(1.0, 0.2) == 1.0 and strength(None, 0.2) == 1.0
    assert strength(0.4, 0.2, top=0.9) < strength(0.4, 0.2) / 2


def test_the_commit_message_opens_with_a_short_summary(vault: Vault) -> None:
    ids = [
        vault.add(
            "episodic", f"Trivial note number {n} about {w}", importance=1, created=T0S
        ).memory.id
        for n, w in enumerate(["lunch", "coffee", "weather", "parking", "music", "snacks"])
    ]
    log_reads(vault, ids[:2], weeks(1))
    consolidate(vault.core, now=weeks(12))
    message = git(vault.root, "log", "-1", "--format=%B")
    summary = message.split("\n\n- ", 1)[0].splitlines()
    assert len(summary) <= SUMMARY_LINES
    assert summary[0].startswith("memvault: consolidate (")
    assert any(line.startswith("archive 6: ") and line.endswith("and 2 more") for line in summary)
    assert any(line.startswith(f"usage ({USAGE_PATH}): reads of 2 memories") for line in summary)
    # each decision follows with its reason; reads and relevance are not listed one by one
    assert message.count("\n- decay: ") == 6 and "\n- fold: " not in message


def test_ranking_uses_the_relevance_of_the_usage_file(vault: Vault) -> None:
    one = vault.add("semantic", "The blue team deploys on Tuesdays").memory.id
    two = vault.add("semantic", "The blue team deploys on Tuesday").memory.id

    def relevance_boost(memory_id: str) -> float | None:
        hits = vault.recall("when does the blue team deploy", explain=True, log=False).hits
        hit = next(h for h in hits if h.id == memory_id)
        return (hit.explain or {}).get("boosts", {}).get("relevance")

    assert relevance_boost(one) is None
    records = {one: Usage(3, T0S, 0.25), two: Usage(0, None, 1.0)}
    (vault.root / USAGE_PATH).write_text(render(records), encoding="utf-8")
    assert relevance_boost(one) == pytest.approx(1 - 0.2 * 0.75)
    assert relevance_boost(two) == pytest.approx(1.0)


def test_usage_merges_id_by_id() -> None:
    base = render({"a": Usage(2, "2026-01-01T00:00:00Z", 0.5), "b": Usage(1, T0S, 0.4)})
    ours = render(
        {
            "a": Usage(5, "2026-01-03T00:00:00Z", 0.7),
            "b": Usage(1, T0S, 0.4),
            "c": Usage(1, T0S, 0.9),
        }
    )
    theirs = render({"a": Usage(4, "2026-01-02T00:00:00Z", 0.6), "b": Usage(2, T0S, 0.3)})
    merged = parse(merge(base, ours, theirs))
    assert merged["a"] == Usage(7, "2026-01-03T00:00:00Z", 0.7)  # 2 + 3 + 2 reads
    assert merged["b"].access_count == 2 and merged["c"].access_count == 1
    # a damaged line is skipped, not fatal
    assert parse('{"id": "x", "access_count": 1}\nnot json\n') == {"x": Usage(1, None, None)}


def test_two_clones_consolidating_merge_their_usage_without_conflict(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "tester@example.com")
    mid = vault.add("semantic", "The staging host is db-stg-3").memory.id
    register_driver(vault.root)
    git(vault.root, "checkout", "-q", "-b", "other")
    log_reads(vault, [mid], weeks(1))
    consolidate(vault.core, now=weeks(1) + dt.timedelta(hours=1))
    git(vault.root, "checkout", "-q", "main")
    log_reads(vault, [mid], weeks(2))
    log_reads(vault, [mid], weeks(2) + dt.timedelta(minutes=5))
    consolidate(vault.core, now=weeks(2) + dt.timedelta(hours=1))
    proc = subprocess.run(
        ["git", "merge", "-q", "--no-edit", "other"], cwd=vault.root, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    merged = parse((vault.root / USAGE_PATH).read_text(encoding="utf-8"))
    assert merged[mid].access_count == 3
    assert merged[mid].last_accessed == "2026-01-15T00:05:00Z"
    # the driver is chosen by path: any other file keeps git's text merge
    assert merge_texts("a\n", "b\n", "c\n", "notes.txt").conflict


def test_a_procedure_that_fails_often_gets_a_review_proposal(vault: Vault) -> None:
    proc = vault.add(
        "procedural",
        "Rotate the TLS certificate on the edge proxy",
        steps=["renew with certbot", "copy the files", "reload nginx"],
    ).memory.id
    other = vault.add("procedural", "Restart the worker pool", steps=["drain", "restart"]).memory.id
    outcomes = [("failure", "nginx kept the old certificate"), ("success", "")]
    outcomes += [("failure", "certbot rate limit"), ("failure", "reload did not pick it up")]
    for outcome, note in outcomes:
        vault.procedure_used(proc, outcome, note)
    for _ in range(4):
        vault.procedure_used(other, "success")
    plan, _ = consolidate(vault.core, now=weeks(1), only=["optimize"])
    (review,) = vault.inbox()
    assert review.meta["supersedes"] == proc and review.meta["steps"][2] == "reload nginx"
    assert review.content.startswith("Rotate the TLS certificate on the edge proxy")
    assert review.title == vault.get(proc).title
    assert f"{proc} failed 3 of its 4 recorded uses (success rate 25%)" in review.content
    assert "- reload did not pick it up" in review.content  # the failures' notes, newest first
    assert "- nginx kept the old certificate" in review.content
    # nothing proposed for the procedure that works; a second run proposes nothing new
    assert [a.memory_id for a in plan.actions] == [review.id]
    assert consolidate(vault.core, now=weeks(1), only=["optimize"])[0].empty
    # accepting the reviewed version replaces the failing procedure, its tombstone kept
    vault.accept(review.id)
    old = vault.get(proc)
    assert (old.status, old.meta["superseded_by"]) == ("superseded", review.id)
    assert vault.get(review.id).status == "active"


def test_a_rejected_review_comes_back_only_after_more_uses(vault: Vault) -> None:
    proc = vault.add("procedural", "Flush the CDN cache", steps=["purge", "verify"]).memory.id
    for _ in range(4):
        vault.procedure_used(proc, "failure")
    consolidate(vault.core, now=weeks(1), only=["optimize"])
    vault.reject(vault.inbox()[0].id, "the CDN was down that week")
    assert consolidate(vault.core, now=weeks(2), only=["optimize"])[0].empty
    vault.procedure_used(proc, "failure", "still failing")
    consolidate(vault.core, now=weeks(3), only=["optimize"])
    (again,) = vault.inbox()
    assert "failed 5 of its 5 recorded uses" in again.content
