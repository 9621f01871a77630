"""``stats``: usage over a window and seed 004's metrics, computed from the consolidation log,
the access log (and the folded reads consolidation keeps) and git history.

The vault below is built in real git with known inputs -- consolidations run at chosen
times, reads logged at chosen times, commits backdated -- and every figure is checked
against the value worked out by hand from its definition (:mod:`memvault.metrics`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from memvault.consolidate import consolidate
from memvault.memory import format_time, now_utc
from memvault.paths import ACCESS_LOG, ACCESS_LOG_HISTORY
from memvault.reports import usage_stats, vault_stats

from helpers import Result, git

T = now_utc()


def ago(days: float) -> dt.datetime:
    return T - dt.timedelta(days=days)


@contextmanager
def committed_at(when: dt.datetime) -> Iterator[None]:
    """Commits made inside the block carry this author and committer time."""
    stamp = format_time(when)
    saved = {k: os.environ.get(k) for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")}
    os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = stamp
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def read(ts: dt.datetime, cmd: str, ids: list[str], ms: float) -> str:
    record = {"ts": format_time(ts), "kind": "query", "cmd": cmd, "q": cmd, "ids": ids, "ms": ms}
    return json.dumps(record) + "\n"


def append(path: Path, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("".join(lines))


# What each promotion proposed, by vault (read from the plans it returned, not from the log).
PROPOSED: dict[Path, dict[str, list[str]]] = {}
STEPS_A = ["check the worker logs", "restart the worker"]
STEPS_B = ["bump the version", "tag the release", "push the tag"]


@pytest.fixture
def known(tmp_path: Path) -> Vault:
    """A vault 60 days old where consolidations, decays, validations and edits happened."""
    with committed_at(ago(60)):
        vault = Vault.init(tmp_path / "v")
    # facts: f0 is superseded by f1, so 4 are active (f1..f4)
    vault.add("semantic", "The API rate limit is 100 req/s", id="f0", subject="api.rate")
    vault.add("semantic", "The API rate limit is 200 req/s", id="f1", subject="api.rate")
    for n, text in ((2, "PostgreSQL is the database"), (3, "Deploys freeze on Fridays")):
        vault.add("semantic", text, id=f"f{n}")
    vault.add("semantic", "Sentry holds the error reports", id="f4")
    # episodes that decay: x long ago (archived by a consolidation outside the window),
    # y1, y2 important but old (archived by one inside it)
    vault.add("episodic", "A trivial note", id="x", importance=1, created=format_time(ago(200)))
    for n in (1, 2):
        vault.add(
            "episodic", f"Old event {n}", id=f"y{n}", importance=5, created=format_time(ago(100))
        )
    vault.log("s1", "user", "hello there")  # a transcript: decays, but is never promoted
    # e1..e3 follow the same steps: promoted 45 days ago (outside the window)
    for n in (1, 2, 3):
        vault.add("episodic", f"Worker stuck, episode {n}", id=f"e{n}", steps=STEPS_A)
    old, _ = consolidate(vault.core, now=ago(45), only=["promote"])
    # e4..e6 follow other steps: promoted 10 days ago (inside)
    for n in (4, 5, 6):
        vault.add("episodic", f"Release, episode {n}", id=f"e{n}", steps=STEPS_B)
    new, _ = consolidate(vault.core, now=ago(10), only=["promote"])
    PROPOSED[vault.root] = {
        when: [a.memory_id for a in plan.actions if a.step == "promote"]
        for when, plan in (("old", old), ("new", new))
    }
    consolidate(vault.core, now=ago(40), only=["decay"])  # archives x
    consolidate(vault.core, now=ago(20), only=["decay"])  # archives y1, y2
    # reads: logged, then folded by a consolidation (which keeps them as history)
    append(
        vault.root / ACCESS_LOG,
        read(ago(100), "recall", ["e1"], 5),  # older than the history keeps
        read(ago(40), "validate", ["f3"], 5),  # outside the window
        read(ago(25), "recall", ["e1"], 10),
        read(ago(12), "validate", ["f1", "f2"], 20),
        read(ago(3), "search", [], 30),
        read(ago(3), "fact", ["f1"], 40),
    )
    consolidate(vault.core, only=["fold"])
    # reads not folded yet
    append(
        vault.root / ACCESS_LOG,
        read(ago(1), "validate", ["f4", "f0"], 50),  # f0 is superseded: not an active fact
        read(ago(1), "recall", [], 60),
    )
    # procedures: p4's edit is 40 days old; p1's steps and p3's text change in the window;
    # p2 gets only a success rate (bookkeeping); p5 is never edited
    for n in (1, 2, 3, 4, 5):
        vault.add("procedural", f"Procedure {n}", id=f"p{n}", steps=["one", "two"])
    with committed_at(ago(40)):
        vault.update("p4", {"steps": ["one", "two", "three"]}, "p4: a third step")
    vault.update("p1", {"steps": ["one", "check", "two"]}, "p1: check before two")
    vault.update("p2", {"success_rate": 0.9}, "p2: worked again")
    path = vault.root / vault.get("p3").path
    path.write_text(path.read_text(encoding="utf-8").replace("Procedure 3", "Procedure 3, faster"))
    git(
        vault.root,
        "-c",
        "user.name=Ann",
        "-c",
        "user.email=ann@example.com",
        "commit",
        "-qam",
        "p3",
    )
    return vault


def test_seed_metrics_from_known_history(known: Vault) -> None:
    stats = vault_stats(known.core, days=30)
    assert stats["window"]["span_days"] == 30.0
    m = stats["metrics"]
    # consolidation: e1..e6 are in a proposal's derived_from; x, y1, y2 are not; the
    # transcript does not count (promotion never looks at transcripts)
    assert m["basis"]["consolidation_rate"] == {"episodes": 9, "consolidated": 6}
    assert m["consolidation_rate"] == round(6 / 9, 4) == 0.6667
    # decay: y1, y2 archived in the window (x was, 40 days ago: not counted); decaying now
    # e1..e6 and the transcript, plus y1, y2 -> 2 of 9 in 30/7 weeks
    assert m["basis"]["decay_rate"] == {
        "archived_by_decay": 2,
        "decaying": 9,
        "weeks": round(30 / 7, 4),
    }
    assert m["decay_rate"] == round(2 / 9 / (30 / 7), 4) == 0.0519
    # validation: f1, f2 (12 days ago) and f4 (yesterday) of f1..f4; f3's check is too old
    assert m["basis"]["validation_rate"] == {"facts": 4, "validated": 3}
    assert m["validation_rate"] == 0.75
    # patterns: what the promotion of 10 days ago proposed from e4..e6 (at least the
    # procedure of their shared steps), not what the one of 45 days ago proposed
    proposed = PROPOSED[known.root]
    assert proposed["old"] and proposed["new"]
    assert m["basis"]["patterns_discovered"]["proposals"] == proposed["new"]
    assert m["patterns_discovered"] == len(proposed["new"])
    # procedures: p1 (steps) and p3 (text); not p2 (bookkeeping), p4 (too old), p5
    assert m["procedures_optimized"] == 2
    assert m["basis"]["procedures_optimized"] == {"procedures": ["p1", "p3"]}


def test_usage_counts_the_window_including_folded_reads(known: Vault) -> None:
    usage = vault_stats(known.core, days=30, now=T)["usage"]
    # in the window: 4 folded (25, 12, 3, 3 days ago) + 2 live (yesterday)
    assert usage["queries"] == 6
    assert usage["queries_per_day"] == 0.2  # 6 / 30 calendar days, not / 5 days with reads
    assert usage["recall_hit_rate"] == round(4 / 6, 4)
    assert usage["avg_query_ms"] == 35.0  # (10+20+30+40+50+60) / 6
    assert usage["most_recalled"][0] == {"id": "f1", "count": 2}
    # a shorter window: yesterday's two and the two of 3 days ago
    week = vault_stats(known.core, days=7, now=T)
    assert week["usage"]["queries"] == 4 and week["usage"]["queries_per_day"] == round(4 / 7, 4)
    assert week["metrics"]["basis"]["validation_rate"]["validated"] == 1  # f4
    assert week["metrics"]["patterns_discovered"] == 0


def test_folded_reads_are_kept_trimmed_and_not_counted_twice(known: Vault) -> None:
    history = (known.root / ACCESS_LOG_HISTORY).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["ms"] for line in history] == [5, 10, 20, 30, 40]  # 100 days: gone
    assert git(known.root, "check-ignore", ACCESS_LOG_HISTORY).strip() == ACCESS_LOG_HISTORY
    before = vault_stats(known.core)["usage"]["queries"]
    consolidate(known.core, only=["fold"])  # folds yesterday's two
    history = (known.root / ACCESS_LOG_HISTORY).read_text(encoding="utf-8").splitlines()
    assert len(history) == 7 and not (known.root / ACCESS_LOG).exists()
    assert vault_stats(known.core)["usage"]["queries"] == before == 6


def test_queries_per_day_divides_by_the_calendar_span(tmp_path: Path) -> None:
    with committed_at(ago(10)):
        vault = Vault.init(tmp_path / "v")
    # 5 queries on 2 days of a 10-day-old vault: 0.5 a day (it used to say 2.5)
    append(
        vault.root / ACCESS_LOG,
        *(read(ago(9), "recall", [], 1) for _ in range(3)),
        *(read(ago(2), "recall", [], 1) for _ in range(2)),
    )
    stats = vault_stats(vault.core, days=30, now=T)
    assert stats["window"]["start"] == format_time(ago(10))  # the vault's age clips it
    assert stats["usage"]["queries_per_day"] == 0.5
    assert usage_stats(vault.root)["queries"] == 5
    # a vault born today: at least one day
    young = Vault.init(tmp_path / "young")
    append(young.root / ACCESS_LOG, *(read(now_utc(), "recall", [], 1) for _ in range(3)))
    assert vault_stats(young.core)["usage"]["queries_per_day"] == 3.0


def test_real_reads_count(vault: Vault) -> None:
    vault.add("semantic", "Sentry holds the error reports", id="sentry")
    vault.validate("Sentry holds the error reports")
    vault.recall("where are the error reports?")
    stats = vault_stats(vault.core)
    assert stats["usage"]["queries"] == 2 and stats["usage"]["recall_hit_rate"] == 1.0
    assert stats["metrics"]["validation_rate"] == 1.0


Cli = Callable[..., Result]


def test_cli_stats_prints_and_serialises_the_metrics(cli: Cli, known: Vault) -> None:
    res = cli("--vault", known.root, "stats", "--json")
    assert res.code == 0, res.err
    data: Any = res.json()
    assert data["metrics"]["decay_rate"] == 0.0519 and data["usage"]["queries"] == 6
    text = cli("--vault", known.root, "stats")
    assert text.code == 0, text.err
    assert "queries: 6 (0.20/day)" in text.out
    assert "consolidation rate: 67% (6 of 9 episodes" in text.out
    assert "decay rate: 5.2%/week (2 of 9 decaying memories archived in 4.2857 weeks)" in text.out
    assert "validation rate: 75% (3 of 4 facts" in text.out
    found = len(PROPOSED[known.root]["new"])
    assert f"patterns discovered: {found}   procedures optimized: 2" in text.out
    bad = cli("--vault", known.root, "stats", "--days", "0")
    assert bad.code == 1 and bad.err.strip() == "Error: days: expected 1-90 days, got 0"
