"""Benchmark the embedders: import time, model load, query latency, document throughput.

Each embedder is measured in its own fresh Python process (so one's imports and threads do
not colour the other's numbers), on LoCoMo turns of varying length:

    python bench/embed.py                      # ONNX default vs sentence-transformers
    python bench/embed.py --variants default,int8,st --docs 2000 --json

The ONNX model must be cacheable (it is exported once on first use; that time is reported
separately as ``prepare_s`` and excluded from ``load_s``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# LoCoMo (github.com/snap-research/locomo, data/locomo10.json): pass --data or set LOCOMO_DATA.
DEFAULT_DATA = Path(os.environ.get("LOCOMO_DATA", "locomo10.json"))
SPECS = {
    "default": "default",
    "int8": "all-MiniLM-L6-v2:int8",
    "st": "sentence-transformers:all-MiniLM-L6-v2",
    "fake": "fake",
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def load_texts(path: Path, count: int) -> tuple[list[str], list[str]]:
    """Return ``count`` LoCoMo turns (documents) and up to 200 questions (queries)."""
    if path.exists():
        data = json.loads(path.read_text("utf-8"))
        turns: list[str] = []
        queries: list[str] = []
        for sample in data:
            conv = sample["conversation"]
            for key, value in conv.items():
                if key.startswith("session_") and isinstance(value, list):
                    turns.extend(f"{t['speaker']}: {t['text']}" for t in value if t.get("text"))
            queries.extend(q["question"] for q in sample.get("qa", []) if q.get("question"))
    else:  # synthetic fallback so the bench runs anywhere
        words = [
            "memory",
            "agent",
            "remembers",
            "the",
            "user",
            "prefers",
            "tea",
            "over",
            "coffee",
            "in",
            "the",
            "morning",
        ]
        turns = [" ".join(words[: 3 + i % 10] * (1 + i % 7)) for i in range(count)]
        queries = [" ".join(words[: 3 + i % 8]) + "?" for i in range(200)]
    # Every 8th document is a long one (several turns joined) so truncation at 256 tokens
    # and padding costs show up as they would for long memories.
    docs = []
    for i in range(count):
        if i % 8 == 7:
            docs.append(" ".join(turns[(i + k) % len(turns)] for k in range(12)))
        else:
            docs.append(turns[(i * 3) % len(turns)])
    return docs, queries[:200]


def cold_import_seconds(module: str, repeats: int = 5) -> float:
    """Median wall time of ``import module`` in a fresh interpreter."""
    code = (
        "import time; t = time.perf_counter(); import "
        + module
        + "; print(time.perf_counter() - t)"
    )
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], env=_env(), check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(repeats)
    ]
    return statistics.median(times)


def worker(variant: str, data: Path, count: int, out_npy: Path) -> dict[str, Any]:
    """Measure one embedder in this (fresh) process."""
    started = time.perf_counter()
    from memvault.embeddings import get_embedder

    spec = SPECS[variant]
    result: dict[str, Any] = {"variant": variant, "spec": spec}
    if variant in ("default", "int8"):
        # Make sure the ONNX file is in the cache first: a one-time export is not "load".
        prep = subprocess.run(
            [
                sys.executable,
                "-c",
                f"from memvault.embeddings import get_embedder; get_embedder({spec!r}).load()",
            ],
            env=_env(),
            capture_output=True,
            text=True,
        )
        if prep.returncode != 0:
            raise SystemExit(prep.stderr)
        result["prepare_s"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
    embedder = get_embedder(spec)
    if hasattr(embedder, "load"):
        embedder.load()
    result["load_s"] = round(time.perf_counter() - started, 3)  # imports included
    result["identity"] = embedder.identity
    docs, queries = load_texts(data, count)
    embedder.embed_query("warm up")
    latencies = []
    cpu = time.process_time()
    for query in queries:
        t = time.perf_counter()
        embedder.embed_query(query)
        latencies.append(time.perf_counter() - t)
    result["query_cpu_ms"] = round(1000 * (time.process_time() - cpu) / len(queries), 2)
    latencies.sort()
    result["query_p50_ms"] = round(1000 * latencies[len(latencies) // 2], 2)
    result["query_p95_ms"] = round(1000 * latencies[int(len(latencies) * 0.95)], 2)
    t, cpu = time.perf_counter(), time.process_time()
    vectors = embedder.embed_documents(docs)
    elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
    result["docs"] = len(docs)
    result["docs_per_s"] = round(len(docs) / elapsed, 1)
    # CPU seconds (all threads) per document: comparable across runs on a busy machine,
    # where wall-clock throughput mostly measures the neighbours.
    result["docs_per_cpu_s"] = round(len(docs) / cpu, 1)
    result["torch_imported"] = "torch" in sys.modules
    np.save(out_npy, vectors)
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table (or one JSON object with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variants",
        default="default,st",
        help=f"comma list from {','.join(SPECS)} (default: default,st)",
    )
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(args.worker, args.data, args.docs, args.out)))
        return 0

    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in SPECS]
    if unknown:
        parser.error(f"unknown variants: {unknown}")
    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            # Wall-clock numbers mean little on a loaded machine; record how loaded it was.
            "loadavg_1m_start": round(os.getloadavg()[0], 2),
        },
        "import_memvault_embeddings_s": round(cold_import_seconds("memvault.embeddings"), 3),
        "variants": {},
    }
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in variants:
            out = Path(tmp) / f"{variant}.npy"
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    variant,
                    "--docs",
                    str(args.docs),
                    "--data",
                    str(args.data),
                    "--out",
                    str(out),
                ],
                env=_env(),
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                report["variants"][variant] = {"error": proc.stderr.strip().splitlines()[-1:]}
                continue
            report["variants"][variant] = json.loads(proc.stdout.strip().splitlines()[-1])
            vectors[variant] = np.load(out)
    if "st" in vectors:
        for variant, matrix in vectors.items():
            if variant != "st" and matrix.shape == vectors["st"].shape:
                cos = np.sum(matrix * vectors["st"], axis=1)
                report["variants"][variant]["cosine_vs_st_min"] = round(float(cos.min()), 6)
                report["variants"][variant]["cosine_vs_st_mean"] = round(float(cos.mean()), 6)

    report["machine"]["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(report))
        return 0
    machine = report["machine"]
    print(
        f"{machine['cpus']} CPUs, load average {machine['loadavg_1m_start']} -> "
        f"{machine['loadavg_1m_end']}; cold `import memvault.embeddings`: "
        f"{report['import_memvault_embeddings_s']:.3f} s"
    )
    cols = [
        "prepare_s",
        "load_s",
        "query_p50_ms",
        "query_p95_ms",
        "query_cpu_ms",
        "docs_per_s",
        "docs_per_cpu_s",
        "cosine_vs_st_min",
        "cosine_vs_st_mean",
        "torch_imported",
    ]
    print(f"{'variant':10}" + "".join(f"{c:>19}" for c in cols))
    for variant, row in report["variants"].items():
        if "error" in row:
            print(f"{variant:10} ERROR {row['error']}")
            continue
        print(f"{variant:10}" + "".join(f"{str(row.get(c, '-')):>19}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
