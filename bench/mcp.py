#!/usr/bin/env python3
"""MCP benchmark: recall through the real MCP client vs the in-process API, same run.

Builds a vault of N memories (default 10,000; written as files and committed once, then
indexed once with ``vault.reindex()``), then on the same queries measures

- ``inproc``: ``vault.recall(query)`` in this process (index and embedder warm);
- ``mcp``: the ``recall`` tool called through the official SDK client over stdio, against
  a spawned ``memvault mcp`` server (warm: started once, first calls discarded);

and the server's resident memory (RSS) at the end. Targets (issue 6): mcp p50 <= 50 ms,
mcp p50 <= 1.5 x inproc p50, server RSS <= 600 MB at 10,000 memories.

    python bench/mcp.py                         # the real offline model, 10,000 memories
    python bench/mcp.py --embedder fake --n 2000 --queries 100    # quick
    python bench/mcp.py --json                  # one JSON object

Memory texts and queries come from LoCoMo (``--data`` or ``$LOCOMO_DATA``; get it from
github.com/snap-research/locomo): windows of 1-3 consecutive dialogue turns and the
benchmark's questions; without the file, synthetic sentences.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# This file is called mcp.py: keep its folder off the import path, or it shadows the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
# LoCoMo (github.com/snap-research/locomo, data/locomo10.json): pass --data or set LOCOMO_DATA.
DEFAULT_DATA = Path(os.environ.get("LOCOMO_DATA", "locomo10.json"))
AGENT = "bench"


def corpus(data: Path, n: int, queries: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` memory texts and ``queries`` questions."""
    rng = random.Random(seed)
    if data.exists():
        samples = json.loads(data.read_text("utf-8"))
        sessions: list[list[str]] = []
        questions: list[str] = []
        for sample in samples:
            for key, value in sample["conversation"].items():
                if key.startswith("session_") and isinstance(value, list):
                    sessions.append(
                        [f"{t['speaker']}: {t['text']}" for t in value if t.get("text")]
                    )
            questions.extend(str(q["question"]) for q in sample.get("qa", []) if q.get("question"))
        texts: list[str] = []
        for width in (1, 2, 3, 4, 5):
            for turns in sessions:
                for i in range(0, max(0, len(turns) - width + 1)):
                    texts.append(" ".join(turns[i : i + width]))
                    if len(texts) >= n:
                        break
                if len(texts) >= n:
                    break
            if len(texts) >= n:
                break
        rng.shuffle(questions)
    else:
        words = [
            "deploy", "migration", "database", "release", "rollback", "token", "cache", "queue",
            "latency", "budget", "pricing", "customer", "incident", "postgres", "redis", "kafka",
            "staging", "production", "review", "meeting", "roadmap",
        ]  # fmt: skip
        texts = [
            " ".join(rng.choice(words) for _ in range(rng.randint(12, 40))).capitalize() + "."
            for _ in range(n)
        ]
        questions = [
            f"what happened with the {rng.choice(words)} and the {rng.choice(words)}?"
            for _ in range(queries)
        ]
    while len(texts) < n:  # tiny data files: vary the tail so ids and texts stay distinct
        texts.append(f"{texts[len(texts) % max(1, len(texts))]} (note {len(texts)})")
    while len(questions) < queries:
        questions.extend(questions[: queries - len(questions)] or ["what happened?"])
    return texts[:n], questions[:queries]


def build(root: Path, texts: list[str]) -> dict[str, float]:
    """Write the memories as files, commit once, index once."""
    from memvault import Vault
    from memvault.memory import format_time, slugify
    from memvault.store.files import render_new

    t = time.perf_counter()
    vault = Vault.init(root)
    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    writes: dict[str, str] = {}
    scopes = ("team", "team", "team", "global", "self")
    for i, text in enumerate(texts):
        kind = (
            "episodic",
            "episodic",
            "episodic",
            "episodic",
            "episodic",
            "episodic",
            "semantic",
            "semantic",
            "semantic",
            "procedural",
        )[i % 10]
        scope = scopes[i % len(scopes)]
        created = start + dt.timedelta(minutes=97 * i)
        meta: dict[str, Any] = {
            "id": f"m{i:05d}-{slugify(text, max_words=5, max_len=40)}",
            "type": kind,
            "category": {"episodic": "session", "semantic": "facts", "procedural": "workflows"}[
                kind
            ],
            "scope": scope,
            "agent": AGENT if scope == "self" else None,
            "created": format_time(created),
            "importance": 1 + i % 5,
            "tags": [f"t{i % 50}"],
        }
        if kind == "procedural":
            meta["trigger"] = [w for w in slugify(text, max_words=3).split("-")]
            meta["steps"] = [s.strip() for s in text.split(". ") if s.strip()][:5] or [text]
        meta = {k: v for k, v in meta.items() if v is not None}
        writes[vault.core.path_for(meta)] = render_new(meta, text)
    with vault.locked():
        vault.core.commit_files(writes, f"bench: {len(writes)} memories")
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    Vault.open(root).reindex()
    return {"build_s": build_s, "index_s": time.perf_counter() - t}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def inproc(root: Path, queries: list[str], limit: int, warmup: int) -> list[float]:
    from memvault import Vault
    from memvault.search import warm

    vault = Vault.open(root, agent=AGENT)
    warm(vault.core)
    for q in queries[:warmup]:
        vault.recall(q, limit=limit)
    times = []
    for q in queries:
        t = time.perf_counter()
        vault.recall(q, limit=limit)
        times.append((time.perf_counter() - t) * 1000)
    return times


def server_command(root: Path) -> list[str]:
    exe = Path(sys.executable).parent / "memvault"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]
    return [*cmd, "--vault", str(root), "--agent", AGENT, "mcp"]


def server_rss_mb() -> float | None:
    import psutil

    me = psutil.Process(os.getpid())
    best = None
    for child in me.children(recursive=True):
        try:
            cmd = child.cmdline()
            if "mcp" in cmd:
                rss = child.memory_info().rss / 2**20
                best = rss if best is None else max(best, rss)
        except psutil.Error:
            continue
    return best


def through_mcp(root: Path, queries: list[str], limit: int, warmup: int) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cmd = server_command(root)
    keep = (
        "MEMVAULT_EMBEDDER",
        "MEMVAULT_CACHE_DIR",
        "HF_HUB_OFFLINE",
        "TOKENIZERS_PARALLELISM",
        "PYTHONPATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM",
        "OMP_NUM_THREADS",
    )
    env = {k: os.environ[k] for k in keep if k in os.environ}
    out: dict[str, Any] = {}

    async def main() -> None:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
        with open(os.devnull, "w") as devnull:
            t = time.perf_counter()
            async with (
                stdio_client(params, errlog=devnull) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                out["start_s"] = time.perf_counter() - t
                for q in queries[:warmup]:
                    await session.call_tool("recall", {"query": q, "limit": limit})
                out["first_ready_s"] = time.perf_counter() - t
                times = []
                errors = 0
                for q in queries:
                    t0 = time.perf_counter()
                    res = await session.call_tool("recall", {"query": q, "limit": limit})
                    times.append((time.perf_counter() - t0) * 1000)
                    errors += bool(res.is_error)
                out["times"] = times
                out["errors"] = errors
                out["rss_mb"] = server_rss_mb()
                out["list_times"], out["list_all_ms"], out["listed"] = await list_resources(session)

    anyio.run(main)
    return out


async def list_resources(session: Any, calls: int = 20) -> tuple[list[float], float, int]:
    """resources/list through the client: the first page ``calls`` times, then every page."""
    from mcp.types import PaginatedRequestParams

    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        await session.list_resources()
        times.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    cursor, listed = None, 0
    while True:
        page = await session.list_resources(params=PaginatedRequestParams(cursor=cursor))
        listed += len(page.resources)
        cursor = page.next_cursor
        if cursor is None:
            return times, (time.perf_counter() - t0) * 1000, listed


def list_inproc(root: Path, calls: int = 20) -> list[float]:
    """The server's own first-page function in this process: the baseline for resources/list."""
    from memvault import Vault
    from memvault.mcp_server.resources import ResourceList

    listing = ResourceList(Vault.open(root))
    listing.page(None)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        listing.page(None)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="memories in the vault")
    parser.add_argument(
        "--queries", type=int, default=200, help="recall calls measured on each path"
    )
    parser.add_argument("--warmup", type=int, default=10, help="calls discarded before measuring")
    parser.add_argument("--limit", type=int, default=10, help="results per recall")
    parser.add_argument(
        "--embedder", default=None, help="e.g. fake (default: the real offline model)"
    )
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON for texts and questions"
    )
    parser.add_argument("--vault", type=Path, default=None, help="build in (or reuse) this folder")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.path.insert(0, str(ROOT / "src"))

    texts, queries = corpus(args.data, args.n, args.queries, args.seed)
    with tempfile.TemporaryDirectory(prefix="mv-bench-mcp-") as tmp:
        root = args.vault or Path(tmp) / "v"
        if (root / ".memvault").is_dir():
            timing = {"build_s": 0.0, "index_s": 0.0}
            from memvault import Vault

            t = time.perf_counter()
            Vault.open(root).reindex()
            timing["index_s"] = time.perf_counter() - t
        else:
            timing = build(root, texts)
        local = inproc(root, queries, args.limit, args.warmup)
        remote = through_mcp(root, queries, args.limit, args.warmup)
        list_local = list_inproc(root)

    mcp_p50, mcp_p95 = percentile(remote["times"], 0.5), percentile(remote["times"], 0.95)
    in_p50, in_p95 = percentile(local, 0.5), percentile(local, 0.95)
    rss = remote.get("rss_mb")
    result = {
        "mcp_p50_ms": round(mcp_p50, 2),
        "mcp_p95_ms": round(mcp_p95, 2),
        "inproc_p50_ms": round(in_p50, 2),
        "inproc_p95_ms": round(in_p95, 2),
        "ratio_p50": round(mcp_p50 / in_p50, 3) if in_p50 else None,
        "overhead_p50_ms": round(mcp_p50 - in_p50, 2),
        "server_rss_mb": round(rss, 1) if rss is not None else None,
        "n": args.n,
        "queries": len(queries),
        "limit": args.limit,
        "embedder": os.environ.get("MEMVAULT_EMBEDDER") or "default",
        "errors": remote["errors"],
        "server_start_s": round(remote["start_s"], 2),
        "server_first_ready_s": round(remote["first_ready_s"], 2),
        "build_s": round(timing["build_s"], 2),
        "index_s": round(timing["index_s"], 2),
        "mean_mcp_ms": round(statistics.fmean(remote["times"]), 2),
        # resources/list: the first page (mcp.page_size memories) and a walk over every page
        "list_page_p50_ms": round(percentile(remote["list_times"], 0.5), 2),
        "list_page_inproc_p50_ms": round(percentile(list_local, 0.5), 2),
        "list_all_pages_ms": round(remote["list_all_ms"], 1),
        "listed": remote["listed"],
        # 1-minute load average at the end (2 cores shared: compare runs made under alike load)
        "load_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "cpus": os.cpu_count(),
        "targets": {
            "mcp_p50_le_50ms": mcp_p50 <= 50,
            "mcp_p50_le_1.5x_inproc": bool(in_p50) and mcp_p50 <= 1.5 * in_p50,
            "server_rss_le_600mb": rss is not None and rss <= 600,
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    r = result
    print(
        f"vault: {args.n} memories (built {r['build_s']} s, indexed {r['index_s']} s),"
        f" embedder {r['embedder']}"
    )
    print(
        f"recall in-process : p50 {r['inproc_p50_ms']:.2f} ms   p95 {r['inproc_p95_ms']:.2f} ms"
        f"   ({len(local)} calls)"
    )
    print(
        f"recall via MCP    : p50 {r['mcp_p50_ms']:.2f} ms   p95 {r['mcp_p95_ms']:.2f} ms"
        f"   ({len(queries)} calls, {r['errors']} errors)"
    )
    print(f"MCP / in-process  : {r['ratio_p50']}x at p50 (+{r['overhead_p50_ms']:.2f} ms)")
    print(
        f"resources/list    : first page p50 {r['list_page_p50_ms']:.2f} ms via MCP,"
        f" {r['list_page_inproc_p50_ms']:.2f} ms in-process; all {r['listed']} memories"
        f" in {r['list_all_pages_ms']:.0f} ms"
    )
    print(
        f"server            : RSS {r['server_rss_mb']} MB after the run;"
        f" handshake {r['server_start_s']} s, warm after {r['server_first_ready_s']} s"
    )
    print(f"machine           : load {r['load_1m']} on {r['cpus']} CPUs (1-minute average)")
    for name, ok in result["targets"].items():
        print(f"  {'ok  ' if ok else 'MISS'} {name}")


if __name__ == "__main__":
    main()
