"""Chroma server mode against a real ``chroma run`` on 127.0.0.1 (see docs/server-mode.md).

Real components only: the ``chroma`` binary installed with chromadb, a bare git remote
whose ``post-receive`` hook indexes pushed branches into the server, clones that talk to
the same server, and the ``memvault`` CLI in subprocesses. The fake embedder (conftest)
keeps it fast; server mode does not care which model made the vectors.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from memvault.index import open_indexes

from helpers import git, run_memvault

# Starts a real `chroma run` server: out of the fast lane (pytest -m 'not slow').
pytestmark = pytest.mark.slow

CHROMA = Path(sys.executable).parent / "chroma"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_chroma(data: Path, port: int) -> Iterator[str]:
    """``chroma run`` on 127.0.0.1:``port`` until the block ends; yields its URL."""
    assert CHROMA.exists(), f"the chroma CLI comes with the chromadb package: {CHROMA} is missing"
    data.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{port}"
    with open(data / "server.log", "wb") as log:
        proc = subprocess.Popen(
            [
                str(CHROMA),
                "run",
                "--path",
                str(data / "db"),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, (data / "server.log").read_text(errors="replace")
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "chroma did not answer its heartbeat in 30 s"
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Chroma server on a free loopback port, shared by the tests of this file."""
    with running_chroma(tmp_path_factory.mktemp("chroma"), _free_port()) as url:
        yield url


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person's identity for the git commands these tests run by hand."""
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "tester@example.com")
    monkeypatch.delenv("MEMVAULT_INTERNAL", raising=False)


def server_collections(url: str, stem: str) -> dict[str, int]:
    """``{name: vectors}`` of the server's collections whose name starts with ``stem``."""
    import chromadb
    from chromadb.config import Settings

    host, port = url.rsplit(":", 1)
    client = chromadb.HttpClient(
        host=host.split("//")[1], port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    out = {}
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(stem):
            out[name] = client.get_collection(name).count()
    return out


def mv(root: Path, *args: str, url: str | None = None) -> Any:
    """Run the memvault CLI in ``root`` (with ``index.url`` from the environment) -> JSON."""
    env = {"MEMVAULT_INDEX_URL": url} if url else None
    proc = run_memvault(*args, "--json", cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def ids(result: Any) -> list[str]:
    return [h["id"] for h in result["hits"]]


def wait_indexed(bare: Path, branch: str, sha: str, timeout: float = 30) -> None:
    """post-receive may finish in the background: wait until its index reflects ``sha``."""
    manifest = bare / "memvault" / "worktrees" / branch / ".memvault" / "index" / "manifest.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
            if data.get("commit") == sha and not data.get("dirty"):
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"post-receive did not index {sha[:10]} of {branch} in {timeout} s")


def push(root: Path, bare: Path, branch: str = "main") -> None:
    proc = subprocess.run(
        ["git", "push", "-q", "origin", branch],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    wait_indexed(bare, branch, git(root, "rev-parse", "HEAD").strip())


def test_a_push_from_clone_a_is_found_by_clone_b_through_the_server(
    chroma_url: str, tmp_path: Path
) -> None:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    proc = run_memvault("hooks", "install", "--bare", "--index-url", chroma_url, cwd=bare)
    assert proc.returncode == 0, proc.stderr
    a = Vault.init(tmp_path / "a")
    vault_id = a.config.get("index.vault_id")
    git(a.root, "remote", "add", "origin", str(bare))
    a.add("semantic", "Backups of the orders database run nightly at 02:00.", id="backups")
    push(a.root, bare)
    stem = f"mv-{vault_id}-main-"
    assert sum(server_collections(chroma_url, stem).values()) == 1

    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    b_vault = Vault.open(b, overrides={"index.url": chroma_url})
    first = b_vault.reindex()
    # B's first index takes every vector from the server: nothing is embedded in B.
    assert (first.embedded, first.fetched) == (0, 1), first

    # A (also pointed at the server) writes a memory: memvault commits it; A pushes.
    a = Vault.open(a.root, overrides={"index.url": chroma_url})
    a.add("semantic", "The staging database listens on port 6543.", id="staging-port")
    push(a.root, bare)
    assert sum(server_collections(chroma_url, stem).values()) == 2  # post-receive added it

    # B pulls; the new memory's vector comes from the server, B's embedder is never asked.
    git(b, "pull", "-q", "--ff-only")
    report = mv(b, "reindex", url=chroma_url)
    assert report["added"] == ["semantic/facts/staging-port.md"], report
    assert (report["embedded"], report["fetched"]) == (0, 1), report
    found = mv(
        b, "recall", "which port does the staging database listen on", "--explain", url=chroma_url
    )
    assert ids(found)[0] == "staging-port"
    explain = found["hits"][0]["explain"]
    assert explain["vector"]["rank"] == 1 and "ann" in explain["vector_search"]  # the server's ANN

    # A new clone that never indexed: its first recall works, and even a full rebuild
    # embeds nothing, since the branch's vectors are all on the server.
    git(tmp_path, "clone", "-q", str(bare), str(tmp_path / "c"))
    c = Vault.open(tmp_path / "c", overrides={"index.url": chroma_url})
    assert ids_of(c.recall("staging database port"))[0] == "staging-port"
    rebuilt = c.reindex(full=True)
    assert (rebuilt.embedded, rebuilt.fetched, rebuilt.memories) == (0, 2, 2), rebuilt

    # B writes a memory it has not pushed: B finds it (B sent its vector), while A's
    # searches pass over a vector A has no file for.
    b_vault.add("semantic", "The staging cache is Redis on port 6380.", id="staging-cache")
    assert "staging-cache" in ids_of(b_vault.recall("staging cache redis port"))
    assert ids_of(a.recall("staging cache redis port")) == ["staging-port"]

    # A forgets a memory and pushes: the branch's indexer removes its vector from the
    # server; B, not pulled yet, still finds it by keyword, and drops it after a pull.
    a.forget("backups", "moved to the ops wiki")
    push(a.root, bare)
    assert sum(server_collections(chroma_url, stem).values()) == 2  # staging-port + B's cache
    assert ids_of(b_vault.recall("orders database backups nightly"))[0] == "backups"
    git(b, "pull", "-q", "--no-rebase", "--no-edit")
    assert "backups" not in ids_of(b_vault.recall("orders database backups nightly"))


def test_embedded_and_server_modes_return_the_same_ids(chroma_url: str, tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v", examples=True)
    for i, (kind, text) in enumerate(
        [
            ("semantic", "The API rate limit is 100 requests per second per token."),
            ("semantic", "Production runs PostgreSQL 16 on two replicas."),
            ("semantic", "Alice owns the billing service and its on-call rota."),
            ("episodic", "Deploy of billing failed: a migration locked the invoices table."),
            ("episodic", "Rolled back the search service after latency doubled."),
            ("episodic", "Postmortem: the certificate for api.example.com expired on Sunday."),
            (
                "procedural",
                "Rotate the TLS certificate: renew with certbot, reload nginx, check expiry.",
            ),
            ("procedural", "Release: run tests, tag the commit, push the tag, watch CI."),
        ]
    ):
        vault.add(kind, text, id=f"m{i}")
    queries = [
        "what is the API rate limit",
        "which database does production use",
        "when did the billing deploy fail",
        "how do I rotate the certificate",
        "who owns billing",
        "release steps",
    ]
    embedded = {q: ids_of(Vault.open(vault.root).recall(q, limit=5)) for q in queries}
    served_vault = Vault.open(vault.root, overrides={"index.url": chroma_url})
    served = {q: ids_of(served_vault.recall(q, limit=5)) for q in queries}
    assert all(embedded.values()) and served == embedded
    hit = served_vault.recall(queries[0], limit=1, explain=True).hits[0]
    assert "ann" in str(hit.explain)  # the vector leg really went to the server
    # And back: the embedded index takes its own vectors again (they never left SQLite).
    assert {q: ids_of(Vault.open(vault.root).recall(q, limit=5)) for q in queries} == embedded


def ids_of(result: Any) -> list[str]:
    return [h.id for h in result.hits]


def test_vaults_and_branches_are_kept_apart_on_one_server(
    chroma_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_URL", chroma_url)
    one = Vault.init(tmp_path / "one")
    two = Vault.init(tmp_path / "two")
    one.add("semantic", "Deploy keys are rotated every month.", id="keys-one")
    two.add("semantic", "Deploy keys are rotated every week.", id="keys-two")
    assert one.reindex().embedded == 1 and two.reindex().embedded == 1
    stem_one = f"mv-{one.config.get('index.vault_id')}-main-"
    stem_two = f"mv-{two.config.get('index.vault_id')}-main-"
    assert sum(server_collections(chroma_url, stem_one).values()) == 1
    assert sum(server_collections(chroma_url, stem_two).values()) == 1
    assert ids_of(two.recall("how often are deploy keys rotated")) == ["keys-two"]
    assert ids_of(one.recall("how often are deploy keys rotated")) == ["keys-one"]

    # A branch gets its own collection: what main had is copied there (not re-embedded),
    # what the branch adds stays out of main's.
    git(one.root, "checkout", "-q", "-b", "feature")
    one = Vault.open(one.root)
    one.add("semantic", "The feature flag service is LaunchDarkly.", id="flags")
    report = one.reindex()
    assert (report.embedded, report.fetched) == (1, 0)
    feature = server_collections(chroma_url, f"mv-{one.config.get('index.vault_id')}-feature-")
    assert sum(feature.values()) == 2
    assert sum(server_collections(chroma_url, stem_one).values()) == 1
    git(one.root, "checkout", "-q", "main")
    one = Vault.open(one.root)
    assert "flags" not in ids_of(one.recall("feature flag service"))
    assert sum(server_collections(chroma_url, stem_one).values()) == 1
    assert (
        sum(feature.values())
        == 2
        == sum(
            server_collections(
                chroma_url, f"mv-{one.config.get('index.vault_id')}-feature-"
            ).values()
        )
    )


def test_searches_work_while_the_server_is_away_and_it_catches_up_after(tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there yet
    url = f"http://127.0.0.1:{port}"
    root = Vault.init(tmp_path / "v").root
    vault = Vault.open(root, overrides={"index.url": url})
    vault.add("semantic", "The staging database listens on port 6543.", id="staging-port")
    hit = vault.recall("staging database port", explain=True).hits[0]
    # The index is brought up to date locally; vectors are scored from SQLite meanwhile.
    assert hit.id == "staging-port" and "vector store error" in str(hit.explain)
    with running_chroma(tmp_path / "chroma", port):
        # as a new process would: the index remembers what it owes
        open_indexes.forget(root, release_chroma=True)
        hit = (
            Vault.open(root, overrides={"index.url": url})
            .recall("staging database port", explain=True)
            .hits[0]
        )
        assert hit.id == "staging-port" and "ann" in str(hit.explain)
        assert sum(server_collections(url, "mv-").values()) == 1
