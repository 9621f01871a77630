"""The web inspector's server-side latency on a 10,000-memory vault.

    python bench/ui.py --json                  # build a vault, serve it, measure, print JSON
    python bench/ui.py --vault DIR --json      # reuse a vault built earlier (--keep keeps one)
    python bench/ui.py --count 2000            # a quicker check

The vault is built the way a user builds one: ``memvault import`` of a JSONL file (one
commit), then ``reindex`` with the vault's real default embedder (no fake anywhere). Its
memories are generated: episodes over two years, facts, procedures, in several channels,
with tags; one in ten is another agent's ``self`` memory (the inspector must never show
it), a few are ``global``.

The inspector then runs as ``memvault ui`` does (uvicorn, in a thread of this process) and
is asked over HTTP for: the list page (first page, a deep page, filtered, sorted by
relevance), a search (recall, with the explanation), and memory pages. Each figure is the
server's own time for the request (its ``Server-Timing`` header: routing, the vault,
rendering), not the client's round trip. Baselines, measured in the same run, in-process:
``vault.memories()`` filtered and sorted the way ``memvault list`` does (a full catalog
scan: what a list page would cost without the inspector's snapshot), ``vault.recall`` (what
a search page adds rendering to) and ``vault.get`` (a memory page's lookup).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

AGENT, TEAM = "bench", "core"
TOPICS = [
    "billing service",
    "api gateway",
    "search index",
    "postgres database",
    "staging cluster",
    "mobile app",
    "payment webhook",
    "redis cache",
    "auth tokens",
    "nightly backup job",
    "feature flags",
    "release train",
]
EVENTS = [
    "deploy failed because migrations locked a table",
    "latency rose after the new release",
    "the on-call engineer rotated credentials",
    "a customer reported duplicate charges",
    "tests were flaky on the CI runners",
    "we rolled back after an error spike",
    "disk filled up on the primary node",
    "the team agreed to pin the client library",
]
FACTS = [
    "runs on port {n}",
    "is owned by the platform team",
    "keeps data for {n} days",
    "is rate limited to {n} requests per second",
    "must be deployed on weekdays only",
    "uses TLS certificates renewed every {n} days",
]
CHANNELS = ["slack:#ops", "slack:#dev", "dm:alice", "email", "github"]
TAGS = ["ops", "billing", "infra", "security", "release", "customer", "db", "ci"]
QUERIES = [
    "when did the deploy fail?",
    "what is the rate limit of the api gateway?",
    "how do I roll back the billing service?",
    "duplicate charges",
    "who owns the redis cache?",
    "what happened with the nightly backup job?",
    "how to rotate auth tokens",
    "latency after release",
]


def records(count: int, seed: int = 3) -> list[dict[str, Any]]:
    """``count`` generated memories (JSONL records of ``memvault import``)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for n in range(count):
        topic = TOPICS[n % len(TOPICS)]
        day = rng.randrange(730)
        created = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + day * 86400 + n % 86400)
        )
        rec: dict[str, Any] = {
            "id": f"m{n}-{topic.split()[0]}",
            "created": created,
            "channel": CHANNELS[n % len(CHANNELS)],
            "tags": sorted({TAGS[n % len(TAGS)], TAGS[(n * 7) % len(TAGS)]}),
            "importance": 1 + n % 5,
            "scope": "team",
            "team": TEAM,
        }
        kind = n % 10
        if kind < 6:
            rec.update(
                type="episodic",
                category="session",
                title=f"{topic}: {EVENTS[n % len(EVENTS)]}",
                outcome=rng.choice(["success", "failure", "partial"]),
            )
            body = f"On {created[:10]} {EVENTS[(n // 3) % len(EVENTS)]} ({topic}, case {n})."
        elif kind < 9:
            fact = FACTS[n % len(FACTS)].format(n=10 + n % 90)
            rec.update(type="semantic", category="facts", title=f"The {topic} {fact}")
            body = f"The {topic} {fact}. Recorded as case {n}."
        else:
            rec.update(
                type="procedural",
                category="workflows",
                title=f"How to roll back the {topic} (variant {n})",
                steps=["check the dashboard", "drain traffic", "revert", "tell the team"],
                trigger=["roll back", topic],
            )
            body = f"Procedure {n}: roll back the {topic} safely."
        if n % 10 == 3:  # another agent's private memory: never shown to the inspector
            rec.update(scope="self", agent=f"agent-{n % 7}")
            rec.pop("team")
        elif n % 50 == 7:
            rec.update(scope="global")
            rec.pop("team")
        rec["content"] = body
        out.append(rec)
    return out


def build(folder: Path, count: int, say: Any) -> Path:
    """A vault of ``count`` memories: init, import (one commit), reindex (real embedder)."""
    from memvault import Vault
    from memvault.transfer import import_file

    vault = Vault.init(folder, agent=AGENT, team=TEAM)
    source = folder.parent / f"{folder.name}-import.jsonl"
    with open(source, "w", encoding="utf-8") as handle:
        for rec in records(count):
            handle.write(json.dumps(rec) + "\n")
    say(f"importing {count} memories ...")
    started = time.perf_counter()
    report = import_file(vault.core, source)
    if report.problems or report.added != count:
        raise SystemExit(f"import failed: {report.as_dict()}")
    say(f"  {time.perf_counter() - started:.1f} s; reindex with the default embedder ...")
    started = time.perf_counter()
    vault.reindex()
    say(f"  {time.perf_counter() - started:.1f} s")
    source.unlink()
    return vault.root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="Memories (default 10,000).")
    parser.add_argument("--vault", type=Path, default=None, help="Reuse (or build) this vault.")
    parser.add_argument("--keep", action="store_true", help="Keep the vault built in temp.")
    parser.add_argument("--requests", type=int, default=100, help="Requests per page kind.")
    parser.add_argument("--build-only", action="store_true", help="Build the vault and stop.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args(argv)
    os.environ.pop("MEMVAULT_EMBEDDER", None)  # the vault's real default embedder
    say = (lambda *_: None) if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    work = None
    if args.vault is not None and (args.vault / ".memvault").is_dir():
        folder = args.vault.resolve()
    else:
        if args.vault is None:
            work = Path(tempfile.mkdtemp(prefix="memvault-ui-bench-"))
            folder = work / "vault"
        else:
            folder = args.vault.resolve()
        build(folder, args.count, say)
    try:
        if args.build_only:
            print(json.dumps({"vault": str(folder)}))
            return 0
        result = measure(folder, args.requests, say)
        print(json.dumps(result) if args.json else table(result))
    finally:
        if work is not None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def table(result: dict[str, Any]) -> str:
    return "\n".join(f"{k:32} {v}" for k, v in result.items())


def percentiles(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {
        "p50": round(statistics.median(times), 1),
        "p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
    }


def timed(fn: Any, n: int) -> dict[str, float]:
    times = []
    for i in range(n):
        started = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - started) * 1000)
    return percentiles(times)


def server_ms(response: Any) -> float:
    """The server's own time for a request (its Server-Timing header)."""
    if response.status_code != 200:
        raise SystemExit(
            f"{response.request.url}: HTTP {response.status_code}: {response.text[:300]}"
        )
    return float(response.headers["server-timing"].split("dur=")[1])


def measure(folder: Path, n: int, say: Any) -> dict[str, Any]:
    import httpx

    from memvault import Vault
    from memvault.scopes import Filters
    from memvault.ui import Server

    vault = Vault.open(folder, agent=AGENT, team=TEAM)
    visible = [m.id for m in vault.memories(Filters())]
    rng = random.Random(1)
    ids = [rng.choice(visible) for _ in range(n)]
    result: dict[str, Any] = {"memories": len(vault.all_memories()), "visible": len(visible)}
    say("baselines (in-process library calls) ...")
    for q in QUERIES[:3]:
        vault.recall(q, limit=20, explain=True, log=False)  # load the model, open the index

    def naive_list(i: int) -> None:  # what `memvault list` does: every visible memory, sorted
        items = vault.memories(Filters())
        items.sort(key=lambda m: (str(m.get("created", "")), m.id), reverse=True)
        items[i % 50 * 50 : i % 50 * 50 + 50]

    base_list = timed(naive_list, max(10, n // 5))
    base_search = timed(
        lambda i: vault.recall(QUERIES[i % len(QUERIES)], limit=20, explain=True, log=False), n
    )
    base_get = timed(lambda i: vault.get(ids[i]), n)
    say("serving ...")
    server = Server(vault, port=0)
    server.start()
    try:
        client = httpx.Client(base_url=server.base, timeout=120, follow_redirects=False)
        client.get(server.url)  # the token becomes the cookie
        started = time.perf_counter()
        first = server_ms(client.get("/"))
        result["list_first_ms"] = round(first, 1)
        result["server_ready_s"] = round(time.perf_counter() - started, 2)
        lists = [
            "/",
            "/?page=37",
            "/?type=semantic&tag=ops",
            "/?sort=relevance&channel=slack:%23ops",
            "/?status=any&page=120",
            "/?scope=global",
            "/?category=episodic/session&sort=updated",
        ]
        for path in lists + [f"/m/{i}" for i in ids[:5]]:
            client.get(path)  # warm up every route
        for q in QUERIES:
            client.get("/search", params={"q": q})
        say("measuring ...")
        pages = {
            "list": [server_ms(client.get(lists[i % len(lists)])) for i in range(n)],
            "search": [
                server_ms(client.get("/search", params={"q": QUERIES[i % len(QUERIES)]}))
                for i in range(n)
            ],  # fmt: skip
            "memory": [server_ms(client.get(f"/m/{ids[i]}")) for i in range(n)],
        }
    finally:
        server.stop()
    for name, times in pages.items():
        got = percentiles(times)
        result[f"{name}_p50_ms"], result[f"{name}_p95_ms"] = got["p50"], got["p95"]
    for name, base in (("list", base_list), ("search", base_search), ("memory", base_get)):
        result[f"baseline_{name}_p50_ms"] = base["p50"]
        result[f"{name}_vs_baseline_p50"] = round(
            result[f"{name}_p50_ms"] / max(base["p50"], 0.01), 3
        )
    result["baselines"] = {
        "list": "vault.memories() + sort + one page (what `memvault list` does), in-process",
        "search": "vault.recall(q, limit=20, explain=True), in-process",
        "memory": "vault.get(id), in-process",
    }
    result["requests_per_page_kind"] = n
    result["target_p95_ms"] = 150
    result["within_target"] = all(result[f"{k}_p95_ms"] <= 150 for k in pages)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
