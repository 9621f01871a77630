"""Search performance: index build, incremental reindex, cold CLI recall, query latency, memory.

    python bench/search.py            # 10,000 and 100,000 memories (takes a while)
    python bench/search.py --small    # 2,000 and 20,000: a quick check
    python bench/search.py --json     # one JSON object
    python bench/search.py --vault DIR/v10k --json   # only the in-process queries, on a vault
                                                     # built before (--keep --workdir DIR)

Memories are built from LoCoMo (``--data``): every dialog turn an episode (with its
session and speaker), every question + answer a fact, plus generated procedures, repeated
with a marker until the count is reached; one in ten episodes is another agent's ``self``
memory (hidden from the searcher). Measured, with the vault's default embedder:

* ``index_vs_embedder_ratio``: the raw embedder's time to embed exactly the texts that
  ``reindex --full`` embedded (memories, plus the context vectors of conversation turns),
  divided by the build's wall time -- 1.0 means indexing costs nothing beyond embedding;
  ``texts_per_memory`` and ``index_memories_per_s`` say how much embedding that was. The two
  are timed interleaved, in one window: each batch the build embeds is embedded once more
  by the raw embedder right beside it (before it on even batches, after it on odd ones), and
  that time is taken out of the build's. Load on a shared machine then slows both alike
  (timed in separate windows, the ratio read 0.54 in one run and 1.12 in the next);
  ``--ratio-only`` measures just this, on the small vault;
* ``incremental_reindex_s``: wall time of ``reindex`` after one edited fact (and the
  texts it embedded); ``incremental_reindex_turn_s`` the same for a conversation turn,
  whose neighbours' context vectors change too;
* ``cold_recall_s`` / ``cold_recall_rss_mb``: a fresh ``memvault recall`` process (median of
  3 after one warm-up run for the page cache), and its peak resident memory;
* ``query_p50_ms`` / ``query_p95_ms``: in-process ``vault.recall`` over 200 LoCoMo
  questions, in a fresh worker process (after 5 warm-up queries);
* ``query_p95_ms_100k`` / ``rss_mb_100k``: the same at 100,000 memories (built from
  precomputed vectors: the model embeds each distinct text once), and the worker's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MARK_RE = re.compile(r" \(r\d+\)")
AGENT, TEAM = "bench", "core"
VERBS = [
    "deploy",
    "rotate",
    "migrate",
    "back up",
    "restore",
    "release",
    "review",
    "debug",
    "profile",
    "rebuild",
]
NOUNS = [
    "billing service",
    "api gateway",
    "search index",
    "database",
    "staging cluster",
    "mobile app",
    "payment webhook",
    "cache layer",
    "auth tokens",
    "nightly job",
]
STEPS = [
    "check the dashboard",
    "open a ticket",
    "run the test suite",
    "take a snapshot",
    "drain the traffic",
    "apply the change",
    "watch the error rate",
    "roll back if needed",
    "tell the team",
    "write an episode",
]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MEMVAULT_EMBEDDER", None)
    env.update(MEMVAULT_AGENT=AGENT, MEMVAULT_TEAM=TEAM)
    return env


# --- the synthetic vault ---------------------------------------------------------------------


def base_records(data: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """LoCoMo turns as episodes, its Q&A as facts, generated procedures; and the questions."""
    import locomo

    records: list[dict[str, Any]] = []
    questions: list[str] = []
    rng = random.Random(7)
    for ci, conv in enumerate(locomo.load(data)):
        numbered = [(session.n, turn) for session in conv.sessions for turn in session.turns]
        for i, (session_n, turn) in enumerate(numbered):
            scope = "self" if i % 10 == 3 else "team"
            rec = {
                "type": "episodic",
                "category": "conversation",
                "session": f"c{ci}-s{session_n}",
                "speaker": turn.speaker,
                "created": turn.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "content": f"{turn.speaker}: {turn.text}",
                "scope": scope,
            }
            if scope == "self":
                rec["agent"] = f"agent-{i % 7}"
            else:
                rec["team"] = TEAM
            records.append(rec)
        questions.extend(q.q for q in conv.questions)
    raw = json.loads(data.read_text(encoding="utf-8"))
    for sample in raw:
        for qa in sample.get("qa", []):
            answer = qa.get("answer") or qa.get("adversarial_answer")
            if answer:
                records.append(
                    {
                        "type": "semantic",
                        "category": "facts",
                        "title": str(qa["question"])[:120],
                        "content": str(answer),
                        "scope": "team",
                        "team": TEAM,
                        "created": "2024-01-01T00:00:00Z",
                    }
                )
    for i in range(1500):
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        steps = rng.sample(STEPS, 4)
        records.append(
            {
                "type": "procedural",
                "category": "workflows",
                "title": f"How to {verb} the {noun} (variant {i})",
                "content": f"Procedure {i} to {verb} the {noun} safely.",
                "steps": steps,
                "trigger": [verb, noun],
                "success_rate": round(rng.random(), 2),
                "scope": "team",
                "team": TEAM,
                "created": "2024-02-01T00:00:00Z",
            }
        )
    return records, questions


def make_records(base: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    out = []
    for n in range(count):
        rec = dict(base[n % len(base)])
        copy = n // len(base)
        if copy:
            rec["content"] = f"{rec['content']} (r{copy})"
            if rec.get("session"):
                rec["session"] = f"{rec['session']}-r{copy}"
        rec["id"] = f"m{n}"
        out.append(rec)
    return out


def write_vault(folder: Path, records: list[dict[str, Any]], commit: bool) -> Any:
    """A vault holding ``records`` (written as files; one commit when ``commit``)."""
    from memvault import Vault
    from memvault.store.files import atomic_write, render_new

    vault = Vault.init(folder, agent=AGENT, team=TEAM)
    writes: dict[str, str] = {}
    for rec in records:
        meta = {k: v for k, v in rec.items() if k != "content"}
        rel = vault.core.path_for(meta)
        writes[rel] = render_new(meta, rec["content"])
    if commit:
        with vault.locked():
            vault.core.commit_files(writes, f"bench: {len(writes)} memories")
    else:
        for rel, text in writes.items():
            atomic_write(vault.root / rel, text)
    return vault


# --- precomputed vectors for the big vault ------------------------------------------------------

_VECTORS: dict[str, Any] = {}


class Precomputed:
    """Documents: the real model's vector of the text without its repeat marker (embedded
    once per distinct text); queries: the real model."""

    def __init__(self) -> None:
        from memvault.embeddings import get_embedder

        self.real = get_embedder("default")
        self.dimensions = self.real.dimensions
        self.identity = f"bench-precomputed/{self.real.identity}"

    def embed_documents(self, texts: Any) -> Any:
        import numpy as np

        keys = [MARK_RE.sub("", t) for t in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in _VECTORS]
        if missing:
            for k, v in zip(missing, self.real.embed_documents(missing), strict=True):
                _VECTORS[k] = v
        return np.stack([_VECTORS[k] for k in keys])

    def embed_query(self, text: str) -> Any:
        return self.real.embed_query(text)


def register_precomputed() -> None:
    from memvault.embeddings import hookimpl, register_plugin

    class Plugin:
        @hookimpl
        def memvault_register_embedders(self, register: Any) -> None:
            register("bench-precomputed", lambda _arg: Precomputed())

    register_plugin(Plugin(), name="bench-precomputed")


# --- measurements ----------------------------------------------------------------------------


# A forked child starts with its parent's resident pages counted in its peak RSS (Linux keeps
# the pre-exec high-water mark), and this process holds a model and an index: children are
# started by a small launcher, whose own footprint (~10 MB) is all they inherit.
_LAUNCHER = """
import json, os, subprocess, sys, time
out = open(sys.argv[1], "w")
started = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.PIPE, text=True)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - started
err = proc.stderr.read()
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "wall": wall,
                  "rss_mb": usage.ru_maxrss / 1024, "err": err[-2000:]}))
"""


def run_measured(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run a process and return (wall seconds, its own peak RSS in MB, stdout)."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".out") as out_file:
        proc = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, out_file.name, *argv],
            env=env or _env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"launcher failed: {proc.stderr[-2000:]}")
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        out = out_file.read()
    if info["code"] != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({info['code']}): {info['err']}")
    return info["wall"], info["rss_mb"], out


def memvault_exe() -> list[str]:
    exe = Path(sys.executable).parent / "memvault"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]


def measure_cold_recall(folder: Path, question: str) -> tuple[float, float]:
    argv = [*memvault_exe(), "--vault", str(folder), "recall", question, "--limit", "10", "--json"]
    run_measured(argv)  # warm the page cache (and catch up the index if needed)
    runs = [run_measured(argv) for _ in range(3)]
    for _, _, out in runs:
        json.loads(out)
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def measure_queries(
    folder: Path, questions: list[str], embedder: str | None = None
) -> tuple[dict[str, float], float]:
    payload = json.dumps({"vault": str(folder), "questions": questions, "embedder": embedder})
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker-queries", payload]
    _, rss, out = run_measured(argv)
    return json.loads(out), rss


def worker_queries(payload: str) -> None:
    """In a fresh process: open the vault, 5 warm-up queries, then time each question."""
    args = json.loads(payload)
    if args.get("embedder") == "bench-precomputed":
        register_precomputed()
    from memvault import Vault

    vault = Vault.open(args["vault"], agent=AGENT, team=TEAM)
    if args.get("embedder"):
        vault.config.set("embedder", args["embedder"])
    questions = args["questions"]
    for q in questions[:5]:
        vault.recall(q, limit=10)
    times = []
    for q in questions:
        started = time.perf_counter()
        vault.recall(q, limit=10)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(
        json.dumps(
            {
                "p50": round(statistics.median(times), 1),
                "p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
                "n": len(times),
            }
        )
    )


def other_embedder(
    work: Path, records: list[dict[str, Any]], spec: str, sample: list[str]
) -> dict[str, Any]:
    """The small vault's figures with another embedder (e.g. the multilingual one): index
    build and throughput, cold CLI recall and its memory, in-process p50/p95 and memory."""
    folder = work / f"v-{re.sub(r'[^a-z0-9]+', '-', spec.lower())}"
    vault = write_vault(folder, records, commit=True)
    vault.set_config("embedder", spec, f"bench: embedder {spec}")
    report = vault.reindex(full=True)
    out: dict[str, Any] = {
        "embedder": spec,
        "index_build_s": round(report.seconds, 1),
        "index_memories_per_s": round(report.memories / report.seconds, 1),
    }
    out["cold_recall_s"], out["cold_recall_rss_mb"] = (
        round(x, 3) for x in measure_cold_recall(folder, sample[0])
    )
    lat, rss = measure_queries(folder, sample)
    out["query_p50_ms"], out["query_p95_ms"] = lat["p50"], lat["p95"]
    out["rss_mb_query"] = round(rss, 1)
    return out


def interleaved_build(vault: Any, embedder: Any) -> tuple[Any, float, int]:
    """``reindex --full`` with every batch it embeds embedded once more by the raw embedder,
    alternately just before and just after the build's own call; returns the report, the
    raw embedder's seconds (inside ``report.seconds``) and the number of texts.

    The raw calls also fill the precomputed vectors the big vault is built from."""
    original = type(embedder).embed_documents
    raw: list[float] = []
    texts = [0]

    def raw_call(self: Any, batch: Any) -> None:
        started = time.perf_counter()
        vectors = original(self, batch)
        raw.append(time.perf_counter() - started)
        for text, vec in zip(batch, vectors, strict=True):
            _VECTORS[MARK_RE.sub("", text)] = vec

    def both(self: Any, batch: Any) -> Any:
        texts[0] += len(batch)
        if len(raw) % 2 == 0:
            raw_call(self, batch)
            return original(self, batch)
        out = original(self, batch)
        raw_call(self, batch)
        return out

    type(embedder).embed_documents = both  # type: ignore[method-assign]
    try:
        report = vault.reindex(full=True)
    finally:
        type(embedder).embed_documents = original  # type: ignore[method-assign]
    return report, sum(raw), texts[0]


def bench(args: argparse.Namespace) -> dict[str, Any]:
    import locomo

    from memvault.embeddings import get_embedder

    say = (lambda *_: None) if args.json else (lambda msg: print(msg, file=sys.stderr, flush=True))
    data = locomo.resolve_data(args.data)
    base, questions = base_records(data)
    random.Random(5).shuffle(base)  # a --small vault gets the same mix of kinds as a big one
    rng = random.Random(11)
    sample = rng.sample(questions, min(200, len(questions)))
    small, big = (2_000, 20_000) if args.small else (10_000, 100_000)
    result: dict[str, Any] = {"memories": small, "memories_big": big}
    work = Path(tempfile.mkdtemp(prefix="memvault-bench-", dir=args.workdir))
    try:
        # 1. the vault, and the raw embedder on exactly the texts the index will embed
        say(f"writing {small} memories ...")
        folder = work / "v10k"
        vault = write_vault(folder, make_records(base, small), commit=True)
        embedder = get_embedder(str(vault.config.get("embedder")))
        embedder.embed_documents(["warm up the model", "and its threads"])
        say("reindex --full, the raw embedder timed batch by batch beside it ...")
        report, raw_s, texts = interleaved_build(vault, embedder)
        build_s = report.seconds - raw_s
        result["texts_embedded"] = texts
        result["texts_per_memory"] = round(texts / report.memories, 2)
        result["raw_embedder_texts_per_s"] = round(texts / raw_s, 1)
        result["index_memories_per_s"] = round(report.memories / build_s, 1)
        result["index_vs_embedder_ratio"] = round(raw_s / build_s, 3)
        result["index_build_s"] = round(build_s, 1)
        if args.ratio_only:
            return result
        # 2. one edited memory: a fact (no neighbours), then a conversation turn (its context
        # vectors and its two neighbours' change too)
        fact = next(m for m in vault.all_memories() if m.type == "semantic")
        vault.update(fact.id, {}, "bench edit", content=fact.content + " (edited)")
        started = time.perf_counter()
        report = vault.reindex()
        result["incremental_reindex_s"] = round(time.perf_counter() - started, 3)
        result["incremental_embedded"] = report.embedded + report.context_embedded
        turn = next(
            m
            for m in vault.all_memories()
            if m.type == "episodic" and m.meta.get("session") and m.scope == "team"
        )
        vault.update(turn.id, {}, "bench edit", content=turn.content + " (edited)")
        started = time.perf_counter()
        report = vault.reindex()
        result["incremental_reindex_turn_s"] = round(time.perf_counter() - started, 3)
        result["incremental_embedded_turn"] = report.embedded + report.context_embedded
        # 3. cold CLI recall
        say("cold recall ...")
        result["cold_recall_s"], result["cold_recall_rss_mb"] = (
            round(x, 3) for x in measure_cold_recall(folder, sample[0])
        )
        # 4. in-process latency
        say("in-process queries ...")
        lat, rss = measure_queries(folder, sample)
        result["query_p50_ms"], result["query_p95_ms"] = lat["p50"], lat["p95"]
        result["rss_mb_query"] = round(rss, 1)
        for spec in args.also_embedder:
            say(f"the same {small} memories with embedder {spec} ...")
            result.setdefault("also", {})[spec] = other_embedder(
                work, make_records(base, small), spec, sample
            )
        # 5. the big vault, from precomputed vectors
        say(f"writing {big} memories (no commit) ...")
        register_precomputed()
        big_folder = work / "v100k"
        vault_big = write_vault(big_folder, make_records(base, big), commit=False)
        vault_big.set_config("embedder", "bench-precomputed", "bench: precomputed vectors")
        say("indexing them ...")
        started = time.perf_counter()
        report = vault_big.reindex(full=True)
        result["index_build_s_100k"] = round(time.perf_counter() - started, 1)
        say("in-process queries at the big size ...")
        lat, rss = measure_queries(big_folder, sample, "bench-precomputed")
        result["query_p50_ms_100k"], result["query_p95_ms_100k"] = lat["p50"], lat["p95"]
        result["rss_mb_100k"] = round(rss, 1)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            result["workdir"] = str(work)
    return result


def queries_only(args: argparse.Namespace) -> dict[str, Any]:
    """``query_p50_ms`` / ``query_p95_ms`` / ``rss_mb_query`` on a vault built before: the
    same 200 questions, worker and warm-up as a full run."""
    import locomo

    _, questions = base_records(locomo.resolve_data(args.data))
    sample = random.Random(11).sample(questions, min(200, len(questions)))
    folder = args.vault.resolve()
    config = (folder / ".memvault" / "config.yaml").read_text(encoding="utf-8")
    embedder = "bench-precomputed" if "bench-precomputed" in config else None
    load = os.getloadavg()[0]
    lat, rss = measure_queries(folder, sample, embedder)
    return {
        "vault": str(folder),
        "memories": sum(1 for _ in folder.glob("*/**/*.md")),
        "query_p50_ms": lat["p50"],
        "query_p95_ms": lat["p95"],
        "rss_mb_query": round(rss, 1),
        "load_avg_before": round(load, 2),
        "load_avg_after": round(os.getloadavg()[0], 2),
    }


TARGETS = {
    "index_vs_embedder_ratio": (">=", 0.8),
    "incremental_reindex_s": ("<=", 1.5),
    "cold_recall_s": ("<=", 1.5),
    "query_p50_ms": ("<=", 25),
    "query_p95_ms": ("<=", 60),
    "query_p95_ms_100k": ("<=", 150),
    "cold_recall_rss_mb": ("<=", 500),
    "rss_mb_100k": ("<=", 1200),
}


def table(result: dict[str, Any]) -> str:
    lines = [
        f"memvault search benchmark: {result['memories']:,} and "
        f"{result['memories_big']:,} memories",
        "",
    ]
    for key, (op, target) in TARGETS.items():
        value = result.get(key)
        ok = value is not None and (value >= target if op == ">=" else value <= target)
        lines.append(
            f"  {key:26s} {value!s:>10s}   target {op} {target}   {'ok' if ok else 'MISSED'}"
        )
    lines.append("")
    for key in (
        "raw_embedder_texts_per_s",
        "index_memories_per_s",
        "index_build_s",
        "incremental_embedded",
        "rss_mb_query",
        "query_p50_ms_100k",
        "index_build_s_100k",
    ):
        lines.append(f"  {key:26s} {result.get(key)!s:>10s}")
    for spec, other in (result.get("also") or {}).items():
        lines += ["", f"  {result['memories']:,} memories, default embedder vs {spec}:"]
        for key in (
            "index_memories_per_s",
            "index_build_s",
            "cold_recall_s",
            "cold_recall_rss_mb",
            "query_p50_ms",
            "query_p95_ms",
            "rss_mb_query",
        ):
            lines.append(f"  {key:26s} {result.get(key)!s:>10s} {other.get(key)!s:>10s}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        default=os.environ.get("LOCOMO_DATA", "locomo10.json"),
        help="LoCoMo-format file for the texts (default $LOCOMO_DATA; LoCoMo: "
        "github.com/snap-research/locomo, data/locomo10.json).",
    )
    parser.add_argument(
        "--small", action="store_true", help="2,000 and 20,000 memories instead of 10k and 100k."
    )
    parser.add_argument(
        "--workdir", default=None, help="Where to build the vaults (default: the temp folder)."
    )
    parser.add_argument("--keep", action="store_true", help="Keep the vaults afterwards.")
    parser.add_argument(
        "--also-embedder",
        action="append",
        default=[],
        metavar="SPEC",
        help="Also build and query the small vault with this embedder (e.g. "
        "multilingual-e5-small) and print its figures beside the default's.",
    )
    parser.add_argument(
        "--ratio-only",
        action="store_true",
        help="Only build the small vault and print index_vs_embedder_ratio and its parts.",
    )
    parser.add_argument(
        "--vault",
        type=Path,
        default=None,
        help="Only time the in-process queries (query_p50_ms, query_p95_ms and the worker's "
        "peak RSS) on this vault, built before with --keep (its v10k, or v100k: the "
        "precomputed vectors' embedder is registered when the vault names it).",
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--worker-queries", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_queries:
        worker_queries(args.worker_queries)
        return 0
    if args.vault is not None:
        result = queries_only(args)
        print(
            json.dumps(result)
            if args.json
            else "\n".join(f"  {k:26s} {v}" for k, v in result.items())
        )
        return 0
    os.environ.pop("MEMVAULT_EMBEDDER", None)
    result = bench(args)
    print(json.dumps(result) if args.json or args.ratio_only else table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
