"""The resident process: the command line asks it over a unix socket, and its answers are
the ones the command would have given by itself -- never from a stale index (a write by any
process, a hand edit with or without a commit), never to or from another user, after being
killed, and not at all when turned off."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault import Vault
from memvault.resident import wire
from memvault.resident.runtime import files, key

from helpers import git, run_memvault, write

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the resident process needs SO_PEERCRED (Linux)"
)


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # Short, as a real runtime folder is: pytest's own folders can pass a socket path's limit.
    base = Path(tempfile.mkdtemp(prefix="mvrt-"))  # mode 0700
    monkeypatch.setenv("MEMVAULT_RUNTIME_DIR", str(base))
    monkeypatch.delenv("MEMVAULT_RESIDENT")  # on by default (tests/conftest.py turns it off)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def stocked(vault: Vault, runtime: Path) -> Iterator[Vault]:
    vault.add("semantic", "The billing service deploys to production every Tuesday.")
    vault.add("semantic", "Invoices are rendered with WeasyPrint from Jinja templates.")
    yield vault
    _stop(runtime, vault.root)


def _paths(runtime: Path, root: Path) -> dict[str, Path]:
    return files(runtime, key(root))


def _pid(runtime: Path, root: Path) -> int | None:
    try:
        return int(_paths(runtime, root)["pid"].read_text().strip())
    except (OSError, ValueError):
        return None


def _served(runtime: Path, root: Path) -> list[str]:
    """The requests the resident process logged as answered."""
    log = _paths(runtime, root)["log"]
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if ": exit " in line]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (our child, not reaped yet) is gone too
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def _stop(runtime: Path, root: Path) -> None:
    pid = _pid(runtime, root)
    if pid is not None and _alive(pid):
        os.kill(pid, signal.SIGTERM)


def _wait(predicate, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _listening(runtime: Path, root: Path) -> bool:
    sock = _paths(runtime, root)["sock"]
    if _pid(runtime, root) is None or not sock.exists():
        return False
    with socket.socket(socket.AF_UNIX) as conn:
        try:
            conn.connect(str(sock))
        except OSError:
            return False
    return "serving" in _paths(runtime, root)["log"].read_text()


def recall(root: Path, query: str, **env: str) -> list[str]:
    got = run_memvault("--vault", root, "recall", query, "--json", "--min-score", "0", env=env)
    assert got.returncode == 0, got.stderr
    return [h["id"] for h in json.loads(got.stdout)["hits"]]


def _start(root: Path, runtime: Path) -> int:
    """A first command starts the resident process (and runs itself here)."""
    recall(root, "warm up")
    assert _wait(lambda: _listening(runtime, root)), _paths(runtime, root)["log"].read_text()
    pid = _pid(runtime, root)
    assert pid is not None
    return pid


def test_answers_are_the_ones_the_command_gives_by_itself(stocked: Vault, runtime: Path) -> None:
    root = stocked.root
    _start(root, runtime)
    args = ("--vault", root, "recall", "which day does billing deploy", "--json")
    served = run_memvault(*args)
    alone = run_memvault(*args, env={"MEMVAULT_RESIDENT": "0"})
    assert len(_served(runtime, root)) == 1
    assert (served.returncode, served.stderr) == (alone.returncode, alone.stderr)
    strip = [(k, v) for k, v in json.loads(served.stdout).items() if k != "ms"]
    assert strip == [(k, v) for k, v in json.loads(alone.stdout).items() if k != "ms"]
    # An error is the command's own error, exit code and all.
    bad = run_memvault("--vault", root, "recall", "x", "--limit", "0")
    assert len(_served(runtime, root)) == 2
    assert bad.returncode == 1 and bad.stderr.startswith("Error: ") and bad.stdout == ""


def test_a_served_command_line_imports_little(stocked: Vault, runtime: Path) -> None:
    """The new process only asks: no pathlib, no socket.py, no subprocess, no datetime (the
    memory model's import of it), no json and no re (the installed script is ours, not the
    entry-point template that imports re), each a few ms of every served command, as much as
    the write it asks for (docs/performance.md)."""
    root = stocked.root
    _start(root, runtime)
    env = {"PYTHONPROFILEIMPORTTIME": "1"}
    text = "The on-call rota changes on Mondays"
    got = run_memvault("--vault", root, "add", "fact", text, env=env)
    assert got.returncode == 0, got.stderr
    assert len(_served(runtime, root)) == 1
    imported = {
        line.rpartition("|")[2].strip()
        for line in got.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "memvault.resident.client" in imported
    assert (
        imported
        & {"pathlib", "socket", "subprocess", "typer", "datetime", "memvault.memory", "json", "re"}
        == set()
    )


def test_a_prompt_hook_is_answered_from_its_stdin(stocked: Vault, runtime: Path) -> None:
    root = stocked.root
    _start(root, runtime)
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": "which day does billing deploy?"}
    got = run_memvault(
        "--vault", root, "-q", "context", "--hook", "--min-score", "0", stdin=json.dumps(payload)
    )
    assert got.returncode == 0, got.stderr
    assert "every Tuesday" in json.loads(got.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(_served(runtime, root)) == 1


def test_never_stale_after_a_write_from_any_process(stocked: Vault, runtime: Path) -> None:
    root = stocked.root
    _start(root, runtime)
    # memvault's own write, from another process
    added = run_memvault("--vault", root, "add", "fact", "The office parrot is named Kiwi.")
    assert added.returncode == 0, added.stderr
    assert "parrot" in (root / _only_new(root, "parrot")).read_text()
    assert recall(root, "parrot Kiwi")[:1] == [_id(root, "parrot")]
    # a hand edit and a hand commit
    write(root, "semantic/facts/cat.md", _fact("cat", "The office cat is called Biscuit."))
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a fact by hand")
    assert recall(root, "office cat Biscuit")[:1] == ["cat"]
    # a hand edit, not committed
    write(root, "semantic/facts/cat.md", _fact("cat", "The office cat is called Waffle."))
    assert recall(root, "office cat Waffle")[:1] == ["cat"]
    assert len(_served(runtime, root)) == 4  # the add and the three recalls


def _fact(mid: str, body: str) -> str:
    return f"---\nid: {mid}\ntype: semantic\ncategory: facts\n---\n\n{body}\n"


def _only_new(root: Path, word: str) -> str:
    found = [p for p in (root / "semantic").rglob("*.md") if word in p.read_text()]
    assert len(found) == 1
    return found[0].relative_to(root).as_posix()


def _id(root: Path, word: str) -> str:
    text = (root / _only_new(root, word)).read_text()
    return next(line[4:].strip() for line in text.splitlines() if line.startswith("id: "))


def test_a_killed_process_is_replaced_and_never_answers_for_the_new_one(
    stocked: Vault, runtime: Path
) -> None:
    root = stocked.root
    first = _start(root, runtime)
    os.kill(first, signal.SIGKILL)
    assert _wait(lambda: not _alive(first))
    assert _paths(runtime, root)["sock"].exists()  # left behind
    # The next command runs by itself (right answer), and starts a new process.
    assert (
        recall(root, "billing deploy")[:1]
        == recall(root, "billing deploy", MEMVAULT_RESIDENT="0")[:1]
    )
    assert _wait(lambda: _listening(runtime, root) and _pid(runtime, root) != first)
    before = len(_served(runtime, root))
    recall(root, "invoices")
    assert len(_served(runtime, root)) == before + 1


def test_off_with_one_setting(stocked: Vault, runtime: Path) -> None:
    root = stocked.root
    # The environment variable: no process is started, the command runs by itself.
    for _ in range(2):
        recall(root, "billing", MEMVAULT_RESIDENT="0")
    time.sleep(0.5)
    assert list(runtime.iterdir()) == []  # not even started to find out
    # The config key: a running process declines, ends, and no other is started.
    pid = _start(root, runtime)
    stocked.set_config("resident.enabled", False, "no resident process")
    assert recall(root, "billing deploy") == recall(root, "billing deploy", MEMVAULT_RESIDENT="0")
    assert _wait(lambda: not _alive(pid))
    recall(root, "invoices")
    time.sleep(0.5)
    assert _pid(runtime, root) is None
    assert _served(runtime, root) == []
    # A value it does not know is an error naming the variable and the valid values.
    bad = run_memvault("--vault", root, "recall", "x", env={"MEMVAULT_RESIDENT": "maybe"})
    assert bad.returncode == 1
    assert "MEMVAULT_RESIDENT" in bad.stderr and "true|" in bad.stderr


def test_a_runtime_folder_others_may_use_is_refused(stocked: Vault, runtime: Path) -> None:
    root = stocked.root
    runtime.chmod(0o755)
    got = run_memvault("--vault", root, "recall", "billing", "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["hits"]
    assert "not using a resident process" in got.stderr and "mode 755" in got.stderr
    time.sleep(0.5)
    assert list(runtime.iterdir()) == []  # nothing started, no socket planted
    if os.getuid() == 0:  # another user's folder (only root can make one here)
        runtime.chmod(0o700)
        os.chown(runtime, 65534, 65534)
        got = run_memvault("--vault", root, "recall", "billing", "--json")
        assert got.returncode == 0 and "owned by uid 65534" in got.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_users_connection_is_refused(stocked: Vault, runtime: Path) -> None:
    root = stocked.root
    _start(root, runtime)
    # A mistake opened the socket to everyone (here: a link to it where anyone may go, since
    # pytest's folders are private): the peer's uid still counts.
    public = Path(tempfile.mkdtemp(prefix="memvault-test-"))
    public.chmod(0o755)
    sock = public / "open.sock"
    os.link(_paths(runtime, root)["sock"], sock)
    sock.chmod(0o777)
    request = wire.request(
        str(root), ["recall", "billing"], "/", {}, None, (False,) * 3, ("utf-8", "strict", "strict")
    )
    read, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the other user
        try:
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(str(sock))
                try:
                    conn.sendall(request)
                    conn.shutdown(socket.SHUT_WR)
                    answer = conn.recv(1 << 16)
                except (BrokenPipeError, ConnectionResetError):
                    answer = b""  # closed on it
            os.write(write_end, b"answered" if answer else b"refused")
        except Exception as exc:  # noqa: BLE001
            os.write(write_end, f"error {exc}".encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    sock.unlink()
    public.rmdir()
    assert os.read(read, 200) == b"refused"
    assert "refused a connection from another user" in _paths(runtime, root)["log"].read_text()


def test_the_socket_is_private_and_a_second_process_does_not_start(
    stocked: Vault, runtime: Path
) -> None:
    root = stocked.root
    pid = _start(root, runtime)
    assert stat.S_IMODE(os.stat(_paths(runtime, root)["sock"]).st_mode) == 0o600
    # Started by hand while one serves: it ends at once, the first keeps serving.
    import subprocess

    second = subprocess.run(
        [sys.executable, "-m", "memvault.resident", str(root)], timeout=60, check=False
    )
    assert second.returncode == 0 and _alive(pid) and _pid(runtime, root) == pid
    # kill PID ends it cleanly: no socket or pid file left behind
    os.kill(pid, signal.SIGTERM)
    assert _wait(lambda: not _paths(runtime, root)["sock"].exists())
    assert _pid(runtime, root) is None


def test_add_is_served_and_reads_its_text_from_where_the_command_line_says(
    stocked: Vault, runtime: Path, tmp_path: Path
) -> None:
    root = stocked.root
    _start(root, runtime)
    served = len(_served(runtime, root))
    note = tmp_path / "note.txt"
    note.write_text("The staging database is restored every Sunday.\n")
    runs = [
        run_memvault("--vault", root, "add", "fact", "The office parrot is named Kiwi."),
        run_memvault("--vault", root, "add", "fact", stdin="Lunch is served at noon.\n"),
        run_memvault("--vault", root, "add", "fact", "-", stdin="The VPN rotates keys monthly."),
        # --file: stdin is left alone (an open pipe would hang a command that read it)
        run_memvault(
            "add", "fact", "--file", note.name, cwd=tmp_path, env={"MEMVAULT_VAULT": str(root)}
        ),
    ]
    for got in runs:
        assert got.returncode == 0, got.stderr
    assert len(_served(runtime, root)) == served + len(runs)
    texts = "\n".join(p.read_text() for p in (root / "semantic").rglob("*.md"))
    for text in ("parrot is named Kiwi", "served at noon", "rotates keys", "every Sunday"):
        assert text in texts
    assert git(root, "status", "--porcelain") == ""
    # A refusal is the command's own, and nothing is written.
    secret = run_memvault("--vault", root, "add", "fact", "key AKIAIOSFODNN7EXAMPLE here")
    assert secret.returncode != 0 and "--allow-secrets" in secret.stderr
    assert len(_served(runtime, root)) == served + len(runs) + 1


def test_a_runtime_folder_too_deep_for_a_socket_is_not_used(
    stocked: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    deep.chmod(0o700)
    monkeypatch.setenv("MEMVAULT_RUNTIME_DIR", str(deep))
    got = run_memvault("--vault", stocked.root, "recall", "billing", "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["hits"]
    assert "too long a path for a socket" in got.stderr
    time.sleep(0.5)
    assert list(deep.iterdir()) == []  # no process started that could not listen


def test_it_ends_and_leaves_nothing_behind_when_the_vault_is_gone(
    stocked: Vault, runtime: Path
) -> None:
    root = stocked.root
    pid = _start(root, runtime)
    shutil.rmtree(root)
    assert _wait(lambda: not _alive(pid), timeout=30)
    assert _wait(lambda: list(runtime.iterdir()) == [], timeout=5), list(runtime.iterdir())


def test_a_start_that_does_not_come_up_waits_before_the_next_try(
    vault: Vault, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from memvault.resident import client

    spawned: list[object] = []
    # a resident process that dies before it listens: started, never answering
    monkeypatch.setattr(client.os, "posix_spawn", lambda *a, **k: spawned.append(a) or 0)
    # the clock moves only when this test says so: a loaded machine's pauses don't count
    clock = [time.time()]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    argv = ["--vault", str(vault.root), "recall", "anything"]
    note = _paths(runtime, vault.root)["start"]
    assert client.ask(argv) is None  # nothing listens: the command runs here, and starts one
    assert len(spawned) == 1 and note.read_text().split()[0] == "1"
    clock[0] += 4
    assert client.ask(argv) is None
    assert len(spawned) == 1  # the next command, within the pause (5 s), does not start another
    clock[0] += 2  # the pause is over
    client.ask(argv)
    assert len(spawned) == 2 and note.read_text().split()[0] == "2"
    clock[0] += 6
    client.ask(argv)
    assert len(spawned) == 2  # the pause doubled after a second try (10 s)
    clock[0] += 5
    client.ask(argv)
    assert len(spawned) == 3 and note.read_text().split()[0] == "3"


def test_a_start_that_comes_up_leaves_no_pause_behind(stocked: Vault, runtime: Path) -> None:
    _start(stocked.root, runtime)
    assert not _paths(runtime, stocked.root)["start"].exists()


def test_a_source_checkout_is_stamped_and_an_installed_package_is_not(tmp_path: Path) -> None:
    from memvault.resident.server import code_stamp

    package = tmp_path / "src" / "memvault"
    (package / "validate").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "validate" / "weigh.py").write_text("")
    os.utime(package / "validate" / "weigh.py", ns=(1_000_000_000, 1_000_000_000))
    os.utime(package / "__init__.py", ns=(2_000_000_000, 2_000_000_000))
    assert code_stamp(package) == 2_000_000_000
    os.utime(package / "validate" / "weigh.py", ns=(3_000_000_000, 3_000_000_000))  # edited
    assert code_stamp(package) == 3_000_000_000
    installed = tmp_path / "lib" / "site-packages" / "memvault"
    shutil.copytree(package, installed)
    assert code_stamp(installed) is None


def test_a_process_whose_source_changed_declines_and_ends(stocked: Vault) -> None:
    from memvault.resident import server

    argv = ["--vault", str(stocked.root), "stats"]
    encodings = ("utf-8",) * 3
    raw = wire.request(
        str(stocked.root), argv, str(stocked.root), {}, None, (False,) * 3, encodings
    )
    for stamp, answered, stays in (
        (server.code_stamp(server.PACKAGE), True, True),
        (-1, False, False),
    ):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            theirs.sendall(raw)
            theirs.shutdown(socket.SHUT_WR)
            assert server._handle(ours, stocked.root, stamp) is stays
            ours.close()
            code, out, _ = wire.read_answer(theirs.makefile("rb").read())
        # the same source: answered here; another: declined (the caller runs it) and ended
        assert (code is not None) is answered, out
