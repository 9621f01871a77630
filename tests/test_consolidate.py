"""Consolidation with real git and a frozen --now: every effect is a reviewable commit."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memvault import Vault
from memvault.consolidate import consolidate, plan, why
from memvault.review import accept, inbox, reject

from helpers import commit_count, git, is_clean, last_message, write

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
T0S = "2026-01-01T00:00:00Z"


def weeks(n: float) -> dt.datetime:
    return T0 + dt.timedelta(weeks=n)


def episode(vault: Vault, text: str, **fields: object) -> str:
    fields.setdefault("created", T0S)
    return vault.add("episodic", text, **fields).memory.id


def meta(vault: Vault, memory_id: str) -> dict:
    return dict(vault.get(memory_id).meta)


def used(vault: Vault, memory_id: str) -> dict:
    """A memory's usage record (reads and relevance live outside its file)."""
    return vault.usage(memory_id).as_dict()


@pytest.mark.parametrize(
    ("decay", "expected"),
    [("fast", 0.5**2), ("normal", 0.8**2), ("slow", 0.95**2), ("never", 1.0)],
)
def test_decay_matches_the_formula_for_each_rate(vault: Vault, decay: str, expected: float) -> None:
    mid = episode(vault, f"Something that decays {decay}", importance=5, decay=decay)
    consolidate(vault.core, now=weeks(2), only=["decay"])
    # importance 5/5 × rate^2 weeks × boost 1.0 (never accessed, created this quarter);
    # a memory that never decays keeps its file untouched (no churn in the diff)
    assert (used(vault, mid)["relevance"] or 1.0) == pytest.approx(round(expected, 4))
    assert f"= {expected:.4f}" in why(vault.core, mid, now=weeks(2))


def test_relevance_below_threshold_moves_to_archive_and_not_above(vault: Vault) -> None:
    low = episode(vault, "A trivial episode about lunch", importance=1)
    # 1/5 × 0.8^3 = 0.1024 ≥ 0.1: stays
    consolidate(vault.core, now=weeks(3), only=["decay"])
    assert vault.get(low).path.startswith("episodic/")
    # 1/5 × 0.8^4 = 0.0819 < 0.1: archived, same relative path, status archived
    before = vault.get(low).path
    consolidate(vault.core, now=weeks(4), only=["decay"])
    moved = vault.get(low)
    assert moved.path == f"archive/{before}"
    assert moved.meta["status"] == "archived"
    assert not (vault.root / before).exists()
    assert "archive" in last_message(vault.root)


def _log_access(vault: Vault, ids: list[str], when: dt.datetime) -> None:
    path = vault.root / ".memvault" / "access.log"
    record = {
        "ts": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kind": "query",
        "q": "x",
        "ids": ids,
        "ms": 1.0,
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def test_access_log_folds_into_files_and_refreshes_relevance(vault: Vault) -> None:
    mid = episode(vault, "Deploy went fine", importance=2)
    _log_access(vault, [mid], weeks(10))
    _log_access(vault, [mid], weeks(10) + dt.timedelta(hours=1))
    now = weeks(10) + dt.timedelta(hours=2)
    consolidate(vault.core, now=now)
    m = used(vault, mid)
    assert m["access_count"] == 2
    assert m["last_accessed"] == "2026-03-12T01:00:00Z"
    # accessed today: 2/5 × 0.8^(1h in weeks) × 2.0
    hours = 1 / (24 * 7)
    assert m["relevance"] == pytest.approx(round(0.4 * 0.8**hours * 2.0, 4))
    # the access log was folded exactly once: a second run counts nothing again
    consolidate(vault.core, now=now)
    assert used(vault, mid)["access_count"] == 2


def test_reads_parked_by_a_run_killed_after_its_commit_are_not_counted_twice(
    vault: Vault,
) -> None:
    mid = episode(vault, "Deploy went fine", importance=2)
    _log_access(vault, [mid], weeks(10))
    now = weeks(10) + dt.timedelta(hours=2)
    parked = vault.root / ".memvault" / "access.log.folding"
    log = vault.root / ".memvault" / "access.log"
    kept = log.read_bytes()
    consolidate(vault.core, now=now)
    assert used(vault, mid)["access_count"] == 1
    # the run died after its commit, before dropping the parked log: put it back
    parked.write_bytes(kept)
    _log_access(vault, [mid], weeks(10) + dt.timedelta(hours=1))
    consolidate(vault.core, now=now + dt.timedelta(minutes=1))
    assert used(vault, mid)["access_count"] == 2  # the new read only
    assert not parked.exists()


def test_reads_parked_by_a_run_killed_before_its_commit_are_counted_once(vault: Vault) -> None:
    mid = episode(vault, "Deploy went fine", importance=2)
    _log_access(vault, [mid], weeks(10))
    parked = vault.root / ".memvault" / "access.log.folding"
    log = vault.root / ".memvault" / "access.log"
    log.replace(parked)  # parked, never committed
    _log_access(vault, [mid], weeks(10) + dt.timedelta(hours=1))
    now = weeks(10) + dt.timedelta(hours=2)
    consolidate(vault.core, now=now)
    assert used(vault, mid)["access_count"] == 2
    assert not parked.exists() and not log.exists()
    consolidate(vault.core, now=now)
    assert used(vault, mid)["access_count"] == 2


def test_archived_memory_used_again_comes_back(vault: Vault) -> None:
    mid = episode(vault, "Rare incident with the payment gateway", importance=1)
    consolidate(vault.core, now=weeks(8))
    assert vault.get(mid).status == "archived"
    _log_access(vault, [mid], weeks(9))
    consolidate(vault.core, now=weeks(9) + dt.timedelta(minutes=5))
    back = vault.get(mid)
    assert back.path.startswith("episodic/")
    assert back.status == "active"


def test_near_duplicates_merge_into_oldest_with_tombstones_and_unions(vault: Vault) -> None:
    # Similarity is measured on what the index embeds (tags and the episode's date
    # included), so the texts are long enough for the different tags not to dominate.
    text = (
        "Deploy failed on Friday because the migration locked the users table "
        "and the rollback had to be done by hand"
    )
    a = episode(vault, text, tags=["deploy"], created="2026-01-01T00:00:00Z")
    # the same event, told twice within hours (episodes on different days are recurrences)
    b = episode(
        vault, text + " again", tags=["friday"], created="2026-01-01T02:00:00Z", source="slack"
    )
    other_scope = vault.add(
        "episodic",
        text,
        scope="self",
        created=T0S,
        agent="bot",
    ).memory.id
    commits = commit_count(vault.root)
    consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert commit_count(vault.root) == commits + 1
    keeper = meta(vault, a)
    assert set(keeper["tags"]) == {"deploy", "friday"}
    assert keeper["supersedes"] == b
    tomb = vault.get(b)
    assert tomb.path.startswith("archive/")
    assert tomb.meta["superseded_by"] == a
    assert tomb.meta["status"] == "superseded"
    # never merged across scopes
    assert Vault.open(vault.root, agent="bot").get(other_scope).path.startswith("episodic/")


def test_a_recurring_problem_is_not_merged_away_but_proposed(vault: Vault) -> None:
    # Three deploys on three days failed the same way, told in (nearly) the same words: a
    # recurrence, which is the signal -- not duplicates to fold into one.
    text = (
        "The production deploy failed because DATABASE_URL was missing from the release "
        "config, so the service could not reach its database"
    )
    days = ["2026-11-20T10:00:00Z", "2026-11-24T10:00:00Z", "2026-11-28T10:00:00Z"]
    ids = [episode(vault, text, tags=["deploy"], created=day) for day in days]
    same_day = episode(vault, text, tags=["deploy"], created="2026-11-28T11:30:00Z")
    result, _ = consolidate(vault.core, now=weeks(1), only=["dedup", "promote"])
    merges = [a.what for a in result.actions if a.step == "dedup" and a.what.startswith("merge")]
    assert merges == [f"merge {same_day}"]  # only the retelling of the same day's event
    assert all(vault.get(i).path.startswith("episodic/") for i in ids)
    proposals = inbox(vault.core)
    assert len(proposals) == 1
    assert sorted(proposals[0].meta["derived_from"]) == sorted(ids)


def test_facts_with_different_numbers_are_disputed_not_merged(vault: Vault) -> None:
    # written without the write's own conflict check (by hand, or before it existed): the
    # dedup step is what disputes them
    vault.config.set("supersede.infer", False)
    x = vault.add("semantic", "The cache TTL is 300 seconds for the users endpoint").memory.id
    y = vault.add("semantic", "The cache TTL is 600 seconds for the users endpoint").memory.id
    result, _ = consolidate(vault.core, only=["dedup"])
    assert vault.get(x).status == "disputed" and vault.get(y).status == "disputed"
    assert vault.get(x).path.startswith("semantic/") and vault.get(y).path.startswith("semantic/")
    assert result.disputed and set(result.disputed[0]["ids"]) == {x, y}


def test_a_fact_naming_its_subject_is_never_merged_into_one_that_does_not(vault: Vault) -> None:
    # bench/lifecycle.py: "The platform team is led by Dara." (subject lead.platform) was
    # merged into the older "Dara leads the design team." and the subject lost its fact.
    vault.config.set("supersede.infer", False)
    text = "The platform team is led by Dara and the team meets on Mondays"
    old = vault.add("semantic", text, created=T0S).memory.id
    twin = vault.add("semantic", text + ".", created="2026-01-02T00:00:00Z").memory.id
    named = vault.add("semantic", text, subject="lead.platform").memory.id
    near = vault.add("semantic", text + " at ten", subject="lead.design").memory.id
    consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert vault.get(twin).meta["superseded_by"] == old  # no subject on either: merged
    for kept in (named, near):
        assert vault.get(kept).path.startswith("semantic/"), kept
        assert vault.get(kept).status == "active"


def test_supersede_chain_from_hand_edits(vault: Vault) -> None:
    root = vault.root
    for i, (since, city) in enumerate(
        [("2020-01-01", "Porto"), ("2022-01-01", "Kyiv"), ("2024-06-01", "Lisbon")], start=1
    ):
        head = f"id: city-{i}\ntype: semantic\nsubject: user.city\nvalid_from: {since}"
        write(root, f"semantic/facts/city-{i}.md", f"---\n{head}\n---\n\nLives in {city}.\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hand edits")
    consolidate(vault.core, now=T0, only=["supersede"])
    one, two, three = (meta(vault, f"city-{i}") for i in (1, 2, 3))
    assert one["status"] == "superseded" and one["superseded_by"] == "city-3"
    assert two["status"] == "superseded" and two["superseded_by"] == "city-3"
    assert str(one["valid_to"]).startswith("2024-06-01")
    assert sorted(three["supersedes"]) == ["city-1", "city-2"]
    assert three.get("status", "active") == "active"


def test_a_merged_copy_hands_what_it_replaced_to_the_kept_memory(vault: Vault) -> None:
    # b replaced "old-limit"; merged into a, a replaces it now (not only through b's tombstone)
    root = vault.root
    text = "The public API rate limit is 100 requests per second for every key."
    files = {
        "old-limit": ("2025-01-01T00:00:00Z", "status: superseded\nsuperseded_by: b\n",
                      "The public API rate limit is 50 requests per second."),
        "a": ("2026-01-01T00:00:00Z", "", text),
        "b": ("2026-01-02T00:00:00Z", "supersedes: old-limit\n", text),
    }  # fmt: skip
    for mid, (created, extra, body) in files.items():
        head = f"id: {mid}\ntype: semantic\ncategory: facts\ncreated: {created}\n{extra}"
        write(root, f"semantic/facts/{mid}.md", f"---\n{head}---\n\n{body}\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hand edits")
    vault.reindex()
    consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert meta(vault, "b")["superseded_by"] == "a"
    assert sorted(meta(vault, "a")["supersedes"]) == ["b", "old-limit"]


def test_promotion_needs_three_episodes(vault: Vault) -> None:
    texts = [
        "Deploy failed on Friday because the migration locked the users table",
        "Deploy failed on Friday because the migration locked the orders table",
        "The deploy on Friday failed: migration locked a table again",
    ]
    episode(vault, texts[0], tags=["deploy"])
    episode(vault, texts[1], tags=["deploy"])
    consolidate(vault.core, now=weeks(1), only=["promote"])
    assert inbox(vault.core) == []
    episode(vault, texts[2], tags=["deploy"])
    consolidate(vault.core, now=weeks(1), only=["promote"])
    proposals = inbox(vault.core)
    assert len(proposals) == 1
    p = proposals[0]
    assert p.type == "semantic" and p.meta["status"] == "proposed" and p.meta["source"] == "learned"
    assert len(p.meta["derived_from"]) == 3
    # idempotent: the same cluster is not proposed twice
    consolidate(vault.core, now=weeks(1), only=["promote"])
    assert len(inbox(vault.core)) == 1


def test_a_rejected_proposal_stays_rejected_until_new_evidence(vault: Vault) -> None:
    texts = [
        "Deploy failed on Friday because the migration locked the users table",
        "Deploy failed on Friday because the migration locked the orders table",
        "The deploy on Friday failed: migration locked a table again",
        "Friday deploy failed again, the migration locked the invoices table",
    ]
    for text in texts[:3]:
        episode(vault, text, tags=["deploy"])
    consolidate(vault.core, now=weeks(1), only=["promote"])
    (proposal,) = inbox(vault.core)
    lib = Vault.open(vault.root, role="librarian")
    reject(lib.core, proposal.id, "a coincidence, not a pattern")
    log = (vault.root / ".memvault" / "reviews.log").read_text(encoding="utf-8")
    entry = json.loads(log.splitlines()[-1])
    assert entry["verdict"] == "rejected" and entry["id"] == proposal.id
    assert sorted(entry["derived_from"]) == sorted(proposal.meta["derived_from"])
    assert ".memvault/reviews.log" in git(vault.root, "show", "--name-only", "--format=", "HEAD")
    for _ in range(2):  # the same episodes: not proposed again, run after run
        result, _ = consolidate(vault.core, now=weeks(2), only=["promote"])
        assert [a for a in result.actions if a.step == "promote"] == []
        assert inbox(vault.core) == []
    episode(vault, texts[3], tags=["deploy"])  # new evidence
    consolidate(vault.core, now=weeks(3), only=["promote"])
    (again,) = inbox(vault.core)
    assert len(again.meta["derived_from"]) == 4


def test_a_chain_of_look_alikes_drifting_apart_is_not_a_pattern(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Episodes linked pair by pair (each much like the next) whose typical pair is not alike:
    one subject drifting into another, not one thing seen again."""
    from memvault.consolidate import promote

    words = (  # noqa: SIM905 - a sentence of words reads better than a list of strings
        "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
        "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
    ).split()
    for k in range(0, 20, 2):
        episode(vault, "Paged because " + " ".join(words[k : k + 8]), tags=["pager"])

    def proposed() -> list[str]:
        actions = plan(vault.core, now=weeks(1), only=["promote"]).actions
        return [a.memory_id for a in actions if a.step == "promote"]

    assert proposed() == []
    # the same episodes, the coherence check off: the chain is proposed
    monkeypatch.setattr(promote, "CHAIN_SLACK", 2.0)
    assert proposed()


def test_repeated_steps_become_a_proposed_procedure(vault: Vault) -> None:
    steps = ["Drain the node", "Upgrade the kernel", "Reboot and uncordon"]
    for i, text in enumerate(["Patched node a", "Patched node b", "Patched node c"]):
        episode(vault, text, steps=steps, tags=["patching"], created=f"2026-01-0{i + 1}T00:00:00Z")
    consolidate(vault.core, now=weeks(1), only=["promote"])
    procs = [m for m in inbox(vault.core) if m.type == "procedural"]
    assert len(procs) == 1 and procs[0].meta["steps"] == steps


def test_paraphrased_steps_become_one_proposed_procedure(vault: Vault) -> None:
    worded = [
        ["Drain the node", "Upgrade the kernel", "Reboot and uncordon"],
        ["drain node first", "upgrade kernel packages", "Reboot, then uncordon it"],
        ["Drain the node", "Upgrade the kernel", "Reboot and uncordon"],
    ]
    for i, steps in enumerate(worded):
        episode(vault, f"Patched node {i}", steps=steps, created=f"2026-01-0{i + 1}T00:00:00Z")
    # as many steps, but other acts: not the same procedure
    other = ["Drain the queue", "Rotate the keys", "Restart the workers"]
    for i in range(2):
        episode(vault, f"Rotated keys {i}", steps=other, created=f"2026-01-0{i + 5}T00:00:00Z")
    consolidate(vault.core, now=weeks(1), only=["promote"])
    (proc,) = [m for m in inbox(vault.core) if m.type == "procedural"]
    assert proc.meta["steps"] == worded[0]  # the most usual wording
    assert len(proc.meta["derived_from"]) == 3 and "worded 2 ways" in proc.content


def test_review_accept_and_reject(vault: Vault) -> None:
    lib = Vault.open(vault.root, role="librarian")
    plain = Vault.open(vault.root)
    a = plain.add("semantic", "Everyone uses UTC in logs", scope="global")
    b = plain.add("semantic", "A wrong global claim", scope="global")
    assert a.inbox and b.inbox
    with pytest.raises(Exception, match="librarian"):
        accept(plain.core, a.memory.id)
    accept(lib.core, a.memory.id)
    accepted = plain.get(a.memory.id)
    assert (
        accepted.path == "semantic/facts/everyone-uses-utc-in-logs.md"
        and accepted.status == "active"
    )
    reject(lib.core, b.memory.id, "not true")
    assert not (vault.root / b.memory.path).exists()
    assert "reject" in last_message(vault.root)


def test_weekly_runs_distill_a_transcript_before_it_is_archived(vault: Vault) -> None:
    for i in range(6):
        vault.log(
            "s9",
            "user" if i % 2 == 0 else "assistant",
            f"Turn {i}: staging now runs on db-stg-3 and on-call rotates on Mondays.",
            when=T0 + dt.timedelta(minutes=i),
        )
    transcript = vault.get("session-s9")
    for week in range(1, 7):  # weekly consolidation, as a team runs it
        consolidate(vault.core, now=weeks(week))
        current = vault.get("session-s9")
        summarised = any(m.id == "summary-session-s9" for m in vault.all_memories())
        if current.path.startswith("archive/"):
            assert summarised, f"archived in week {week} before it was distilled"
    assert vault.get("session-s9").path == f"archive/{transcript.path}"
    assert "db-stg-3" in vault.get("summary-session-s9").content + vault.get("session-s9").content


def test_distillation_summarises_old_transcripts(vault: Vault) -> None:
    when = T0
    for i in range(8):
        role = "user" if i % 2 == 0 else "assistant"
        vault.log(
            "s1",
            role,
            f"Turn {i}: we discussed the database migration plan "
            "and the rollback strategy in detail.",
            when=when + dt.timedelta(minutes=i),
        )
    transcript = vault.get("session-s1")
    consolidate(vault.core, now=weeks(2), only=["distill"])
    assert vault.get("session-s1").path.startswith("episodic/")  # not old enough yet
    consolidate(vault.core, now=weeks(6), only=["distill"])
    assert vault.get("session-s1").path == f"archive/{transcript.path}"
    summary = vault.get("summary-session-s1")
    assert summary.meta["category"] == "summary"
    assert summary.meta["related"] == ["session-s1"]
    assert "migration" in summary.content


def test_summarizer_command_output_and_candidate_facts(vault: Vault, tmp_path: Path) -> None:
    script = tmp_path / "summarise.sh"
    script.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        'echo "The team agreed on a blue-green rollout."\n'
        """echo '{"content": "Rollouts are blue-green", "subject": "deploy.strategy"}'\n"""
    )
    script.chmod(0o755)
    vault.set_config("consolidate.summarizer_command", str(script), "use a summarizer")
    vault.log("s2", "user", "Shall we do blue-green?", when=T0)
    consolidate(vault.core, now=weeks(8), only=["distill"])
    assert "blue-green rollout" in vault.get("summary-session-s2").content
    facts = [m for m in inbox(vault.core) if m.type == "semantic"]
    assert len(facts) == 1 and facts[0].meta["subject"] == "deploy.strategy"


def test_failing_summarizer_falls_back_to_extractive(
    vault: Vault, capsys: pytest.CaptureFixture[str]
) -> None:
    vault.set_config("consolidate.summarizer_command", "false", "broken summarizer")
    vault.log("s3", "user", "We will move the cron jobs to the new scheduler next sprint.", when=T0)
    consolidate(vault.core, now=weeks(8), only=["distill"])
    assert "scheduler" in vault.get("summary-session-s3").content
    # the failure is reported on stderr, naming the setting and the fallback
    err = capsys.readouterr().err
    assert "summarizer_command failed" in err and "using the extractive summary" in err


def test_dry_run_writes_nothing(vault: Vault) -> None:
    episode(vault, "Ancient history", importance=1)
    head = git(vault.root, "rev-parse", "HEAD")
    result, sha = consolidate(vault.core, now=weeks(52), dry_run=True)
    assert sha is None and result.actions
    assert git(vault.root, "rev-parse", "HEAD") == head
    assert is_clean(vault.root)


def test_uncommitted_edits_stop_an_apply_and_nothing_is_written(vault: Vault, cli) -> None:  # type: ignore[no-untyped-def]
    """A hand edit not committed yet never goes into consolidation's commit: the run is not
    applied (one error naming the file, nothing written), a dry run names the file, and once
    the edit is committed the run goes ahead with it."""
    from memvault.errors import MemvaultError

    edited = vault.get(episode(vault, "Ancient history", importance=1))
    other = episode(vault, "Other ancient history", importance=1)
    path = vault.root / edited.path
    hand = path.read_text(encoding="utf-8") + "\nA line added by hand.\n"
    path.write_text(hand, encoding="utf-8")
    head = git(vault.root, "rev-parse", "HEAD")
    with pytest.raises(MemvaultError, match="uncommitted edits") as caught:
        consolidate(vault.core, now=weeks(52))
    assert edited.path in str(caught.value)
    assert git(vault.root, "rev-parse", "HEAD") == head
    assert path.read_text(encoding="utf-8") == hand
    assert vault.get(other).path.startswith("episodic/")
    dry = cli("--vault", vault.root, "consolidate", "--dry-run", "--json", "--now", "2027-01-01")
    assert json.loads(dry.out)["held_uncommitted"] == [edited.path]
    run = cli("--vault", vault.root, "consolidate", "--now", "2027-01-01")
    assert run.code == 1 and "uncommitted edits" in run.err and edited.path in run.err
    git(vault.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "my edit")
    result, sha = consolidate(vault.core, now=weeks(52))
    assert sha is not None and result.held == []
    assert vault.get(edited.id).path.startswith("archive/")
    assert "A line added by hand." in (vault.root / vault.get(edited.id).path).read_text()


def test_a_memory_file_git_ignores_does_not_stop_an_apply(vault: Vault) -> None:
    """A file git ignores is nobody's pending work: it never stops a run."""
    episode(vault, "Ancient history", importance=1)
    write(
        vault.root,
        "semantic/facts/scratch.md",
        "---\nid: scratch\ntype: semantic\n---\n\nScratch.\n",
    )
    with (vault.root / ".gitignore").open("a", encoding="utf-8") as handle:
        handle.write("\nsemantic/facts/scratch.md\n")
    git(vault.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "ignore")
    result, sha = consolidate(vault.core, now=weeks(52))
    assert sha is not None and result.held == []


def test_an_edited_inbox_proposal_is_never_proposed_over(vault: Vault) -> None:
    """A proposal being edited by hand (not committed) is not written over by the same
    proposal made again."""
    from memvault.errors import MemvaultError

    steps = ["Drain the node", "Upgrade the kernel", "Reboot and uncordon"]
    for i, text in enumerate(["Patched node a", "Patched node b", "Patched node c"]):
        episode(vault, text, steps=steps, tags=["patching"], created=f"2026-01-0{i + 1}T00:00:00Z")
    consolidate(vault.core, now=weeks(1), only=["promote"])
    proposal = next(m for m in inbox(vault.core) if m.type == "procedural")
    path = vault.root / proposal.path
    hand = path.read_text(encoding="utf-8") + "\nMy note on this proposal.\n"
    path.write_text(hand, encoding="utf-8")
    with pytest.raises(MemvaultError, match="uncommitted edits"):
        consolidate(vault.core, now=weeks(2), only=["promote"])
    assert path.read_text(encoding="utf-8") == hand


def test_second_run_with_same_now_changes_nothing(vault: Vault) -> None:
    episode(vault, "Something happened", importance=3)
    episode(vault, "Something trivial happened", importance=1)
    consolidate(vault.core, now=weeks(5))
    commits = commit_count(vault.root)
    result, sha = consolidate(vault.core, now=weeks(5))
    assert sha is None and result.empty
    assert commit_count(vault.root) == commits


def test_one_commit_and_a_log_entry_per_run(vault: Vault) -> None:
    episode(vault, "Old one", importance=1)
    episode(vault, "Another old one", importance=1)
    commits = commit_count(vault.root)
    consolidate(vault.core, now=weeks(10))
    assert commit_count(vault.root) == commits + 1
    log = (vault.root / ".memvault" / "consolidation.log").read_text().splitlines()
    entry = json.loads(log[-1])
    assert entry["counts"]["archive"] == 2
    assert "consolidate" in last_message(vault.root)


def test_hand_comments_and_unknown_keys_survive(vault: Vault) -> None:
    text = (
        "---\n# written by hand\nid: hand-made\ntype: episodic\ncreated: 2026-01-01\n"
        "importance: 2   # low\nmy_key: keep me\n---\n\nA hand-written episode.\n"
    )
    write(vault.root, "episodic/2026/01/hand-made.md", text)
    git(vault.root, "add", "-A")
    git(vault.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hand")
    consolidate(vault.core, now=weeks(1))  # decays it: its usage record, not its file
    assert (vault.root / "episodic/2026/01/hand-made.md").read_text() == text
    consolidate(vault.core, now=weeks(8))  # 2/5 × 0.8^8 < 0.1: archived, its file rewritten
    new = (vault.root / "archive/episodic/2026/01/hand-made.md").read_text()
    assert (
        "# written by hand" in new and "importance: 2   # low" in new and "my_key: keep me" in new
    )
    assert "status: archived" in new
    assert new.endswith("\n\nA hand-written episode.\n")


def test_retention_archives_old_self_memories(vault: Vault) -> None:
    agent = Vault.open(vault.root, agent="bot")
    mid = agent.add(
        "episodic", "A private note", scope="self", importance=5, decay="never", created=T0S
    ).memory.id
    consolidate(agent.core, now=T0 + dt.timedelta(days=80), only=["retention"])
    assert agent.get(mid).path.startswith("episodic/")
    consolidate(agent.core, now=T0 + dt.timedelta(days=100), only=["retention"])
    assert agent.get(mid).path.startswith("archive/")


def test_why_explains_the_numbers(vault: Vault) -> None:
    mid = episode(vault, "Explain me", importance=4, decay="fast")
    text = why(vault.core, mid, now=weeks(1))
    assert "4/5" in text and "0.5^1.00" in text and "0.4000" in text


def test_unknown_step_is_a_clear_error(vault: Vault) -> None:
    with pytest.raises(Exception, match="unknown step"):
        plan(vault.core, only=["bogus"])


def test_cli_dry_run_prints_plan_and_diff(vault: Vault, cli, chdir) -> None:  # type: ignore[no-untyped-def]
    chdir(vault.root)
    episode(vault, "Ancient CLI history", importance=1)
    res = cli("consolidate", "--dry-run", "--now", "2027-01-01")
    assert res.code == 0
    assert "archive" in res.out and "+++ b/archive/episodic/" in res.out
    assert is_clean(vault.root)
    res = cli("consolidate", "--now", "2027-01-01", "--json")
    data = json.loads(res.out)
    assert data["commit"] and data["counts"]["archive"] == 1


# --- near-duplicates: neighbours come from the index ---------------------------------------

DUP_TEXT = (
    "Deploy failed on Friday because the migration locked the users table "
    "and the rollback had to be done by hand"
)


def _chroma_mode(vault: Vault) -> Vault:
    vault.set_config("index.exact_below", 0, "ask Chroma's HNSW, not the exact in-memory mode")
    return Vault.open(vault.root)


@pytest.mark.parametrize("mode", ["exact", "ann"])
def test_dedup_finds_neighbours_in_the_index_without_embedding(
    vault: Vault, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode == "ann":
        vault = _chroma_mode(vault)
    a = episode(vault, DUP_TEXT, tags=["deploy"])
    b = episode(vault, DUP_TEXT + " again", tags=["deploy"], created="2026-01-01T02:00:00Z")
    for i in range(20):
        episode(
            vault,
            f"Unrelated episode number {i} about {'lunch' if i % 2 else 'hiring'} plans "
            f"and a {i}th meeting",
        )
    vault.reindex()
    from memvault.embeddings.fake import FakeEmbedder

    def no_embedding(self: object, texts: object) -> None:
        raise AssertionError("consolidation embedded text the index already holds")

    monkeypatch.setattr(FakeEmbedder, "embed_documents", no_embedding)
    result, _ = consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert vault.get(b).meta["superseded_by"] == a
    assert [r["mode"] for r in result.neighbours] == [mode]
    assert result.neighbours[0]["stale"] == 0


def test_ann_dedup_never_merges_across_scopes_even_when_other_scopes_crowd_the_neighbours(
    vault: Vault,
) -> None:
    vault = _chroma_mode(vault)
    lib = Vault.open(vault.root, role="librarian")
    # 30 copies in global scope are the nearest vectors of the team pair below: the team
    # pair must still find each other (Chroma is asked again, deeper), and nothing merges
    # across scopes.
    for i in range(30):
        lib.add(
            "episodic",
            DUP_TEXT + " again" * (i % 2),
            scope="global",
            created=f"2026-01-01T00:{i:02d}:00Z",
        )
    team_a = episode(vault, DUP_TEXT, created="2026-01-01T03:00:00Z")
    team_b = episode(vault, DUP_TEXT + " again", created="2026-01-01T04:00:00Z")
    bot = Vault.open(vault.root, agent="bot")
    mine = bot.add("episodic", DUP_TEXT, scope="self", created="2026-01-01T02:00:00Z").memory.id
    result, _ = consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert result.neighbours[0]["mode"] == "ann"
    assert vault.get(team_b).meta["superseded_by"] == team_a
    assert bot.get(mine).path.startswith("episodic/")
    everyone = {m.id: m for m in Vault.open(vault.root, agent="bot").all_memories()}
    for action in result.actions:
        if action.step == "dedup" and action.what.startswith("merge "):
            keeper, dup = everyone[action.memory_id], everyone[action.what.split(" ", 1)[1]]
            assert (keeper.scope, keeper.agent, keeper.team) == (dup.scope, dup.agent, dup.team)
    merged_globals = sum(
        1 for m in everyone.values() if m.scope == "global" and m.status == "superseded"
    )
    assert merged_globals == 29


def test_a_chain_of_rewordings_does_not_merge_its_two_ends(vault: Vault) -> None:
    # A ~ B and B ~ C pass the bar, A ~ C does not: A must not be merged with C through B
    # (on SICK, merging along such chains made 84 % of merged pairs wrong)
    vault.set_config("consolidate.dedup_threshold", 0.9, "the chain's links pass, its ends not")
    vault = Vault.open(vault.root)
    watched = DUP_TEXT + " while the on-call engineer watched"
    ids = [
        vault.add("semantic", text, created=f"2026-01-0{k + 1}T00:00:00Z").memory.id
        for k, text in enumerate(
            [DUP_TEXT, watched, watched + " the error budget burn down over the whole weekend"]
        )
    ]
    vault.reindex()
    result, _ = consolidate(vault.core, now=weeks(1), only=["dedup"])
    merges = [a for a in result.actions if a.step == "dedup" and a.what.startswith("merge ")]
    assert len(merges) == 1, merges  # the closest pair only (B and C, 0.94 with the fake)
    assert vault.get(ids[0]).path.startswith("semantic/")
    assert vault.get(ids[1]).meta["superseded_by"] == ids[2]  # C says all B does, and more


def test_a_merge_keeps_the_memory_that_says_more(vault: Vault) -> None:
    # the newer fact says all the older one does, and more: the detail stays in force
    vault.set_config("consolidate.dedup_threshold", 0.9, "the two are 0.93 with the fake")
    vault = Vault.open(vault.root)
    older = vault.add("semantic", DUP_TEXT, created=T0S, importance=5, decay="slow").memory.id
    detail = DUP_TEXT + " while the on-call engineer watched"
    newer = vault.add(
        "semantic", detail, created="2026-01-02T00:00:00Z", importance=2, decay="fast"
    ).memory.id
    result, _ = consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert vault.get(older).meta["superseded_by"] == newer
    assert vault.get(newer).path.startswith("semantic/")
    # it stands for both: as important, and as slow to fade, as the one it replaced
    assert (vault.get(newer).meta["importance"], vault.get(newer).meta["decay"]) == (5, "slow")
    assert older in str(vault.get(newer).meta["supersedes"])
    (merge,) = [a for a in result.actions if a.step == "dedup" and a.what.startswith("merge ")]
    assert "says the most" in merge.why


def test_a_second_run_does_not_merge_what_the_first_kept_apart(vault: Vault) -> None:
    # "... sadly" and "... quickly" are one sentence about two things (never one memory);
    # each rewords the first. Run 1 merges one of them; run 2 must not merge the other
    # into the memory that now stands for both.
    for k, suffix in enumerate(("", " sadly", " quickly")):
        vault.add("semantic", DUP_TEXT + suffix, created=f"2026-01-0{k + 1}T00:00:00Z")
    vault.reindex()
    merges = []
    for _ in range(2):
        result, _ = consolidate(vault.core, now=weeks(1), only=["dedup"])
        merges.append([a.what for a in result.actions if a.what.startswith("merge ")])
    assert len(merges[0]) == 1 and merges[1] == [], merges


def test_copies_of_the_memory_that_says_more_are_still_kept_over_the_shorter(
    vault: Vault,
) -> None:
    vault.set_config("consolidate.dedup_threshold", 0.9, "the two texts are 0.93 with the fake")
    vault = Vault.open(vault.root)
    older = vault.add("semantic", DUP_TEXT, created=T0S).memory.id
    detail = DUP_TEXT + " while the on-call engineer watched"
    first = vault.add("semantic", detail, created="2026-01-02T00:00:00Z").memory.id
    vault.add("semantic", detail, created="2026-01-03T00:00:00Z")
    consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert vault.get(older).meta["superseded_by"] == first
    assert vault.get(first).path.startswith("semantic/")


@pytest.mark.parametrize("mode", ["exact", "ann"])
def test_dedup_threshold_is_respected_but_identical_text_always_merges(
    vault: Vault, mode: str
) -> None:
    if mode == "ann":
        vault = _chroma_mode(vault)
    vault.set_config("consolidate.dedup_threshold", 0.995, "only near-identical vectors")
    vault = Vault.open(vault.root)
    a = episode(vault, DUP_TEXT)
    near = episode(vault, DUP_TEXT + " again", created="2026-01-01T02:00:00Z")
    same = episode(vault, DUP_TEXT.upper().replace(" ", ",  "), created="2026-01-01T03:00:00Z")
    consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert vault.get(near).path.startswith("episodic/")  # ~0.95 similar: under 0.995
    assert vault.get(same).meta["superseded_by"] == a  # same words: always merged
    vault.set_config("consolidate.dedup_threshold", 0.9, "looser")
    vault = Vault.open(vault.root)
    consolidate(vault.core, now=weeks(1), only=["dedup"])
    assert vault.get(near).meta["superseded_by"] == a


def test_ann_dedup_is_idempotent_with_a_frozen_now(vault: Vault) -> None:
    vault = _chroma_mode(vault)
    for i in range(3):
        episode(vault, DUP_TEXT + " again" * i, created=f"2026-01-01T0{i + 1}:00:00Z")
    vault.config.set("supersede.infer", False)  # the dedup step disputes them, not the write
    vault.add("semantic", "The cache TTL is 300 seconds for the users endpoint")
    vault.add("semantic", "The cache TTL is 600 seconds for the users endpoint")
    first, sha = consolidate(vault.core, now=weeks(2))
    assert sha and first.counts().get("merge") == 2 and first.disputed
    commits = commit_count(vault.root)
    again, sha2 = consolidate(vault.core, now=weeks(2))
    assert sha2 is None and again.empty
    assert commit_count(vault.root) == commits
