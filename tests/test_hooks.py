"""Git hooks: polite install/uninstall, and the hooks firing on real git commands.

Every git command here is the real binary in a temp repository; the hooks are the
installed shims, run by git itself (so they run in a subprocess with git's environment).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault import Vault
from memvault.githooks import install as mvhooks
from memvault.githooks.check import check_staged
from memvault.githooks.names import CLIENT_HOOKS, LAST_ERROR, PENDING, state_dir
from memvault.githooks.server import server_index_url, update_server_index
from memvault.paths import LOCK_PATH
from memvault.store.lock import file_lock

from helpers import git, run_memvault, write

FACT = "---\nid: {id}\ntype: semantic\ncategory: facts\ntags: [t]\n---\n\n{body}\n"
SECRET = "AKIA" + "ABCDEFGHIJKLMNOP"


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person's identity for the commits these tests make by hand with git."""
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "tester@example.com")
    monkeypatch.delenv("MEMVAULT_INTERNAL", raising=False)
    monkeypatch.delenv("MEMVAULT_HOOK_TIMEOUT", raising=False)


def settle(root: Path, timeout: float = 60) -> None:
    """Wait for background reindexes started by hooks to finish (no strays after a test)."""

    def done() -> bool:
        lines = hook_log(root).splitlines()
        started = sum(1 for ln in lines if ln.endswith(": start"))
        ended = sum(1 for ln in lines if re.search(r": (ok|busy|error) in ", ln))
        return ended >= started

    wait_for(done, timeout)


@pytest.fixture
def hooked(vault: Vault) -> Iterator[Vault]:
    report = mvhooks.install(vault.root)
    assert report.ok
    yield vault
    settle(vault.root)


@pytest.fixture
def checked(vault: Vault) -> Vault:
    """Only the pre-commit hook: validation tests start no background reindex."""
    assert mvhooks.install(vault.root, hooks=["pre-commit"]).ok
    return vault


def run_git(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, env=full, timeout=120
    )


def add_fact(root: Path, mid: str, body: str = "A fact.") -> str:
    rel = f"semantic/facts/{mid}.md"
    write(root, rel, FACT.format(id=mid, body=body))
    return rel


def hook_log(root: Path) -> str:
    path = root / ".git" / "memvault" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def hook_runs(root: Path, name: str) -> int:
    return sum(
        1
        for line in hook_log(root).splitlines()
        if f" {name} (pid " in line and line.endswith(": start")
    )


def indexed(root: Path) -> dict[str, str]:
    """path -> file sha as the search index has it (read straight from its SQLite)."""
    db = root / ".memvault" / "index" / "search.sqlite"
    if not db.exists():
        return {}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return dict(conn.execute("SELECT path, sha FROM docs").fetchall())
    except sqlite3.Error:  # being created right now
        return {}
    finally:
        conn.close()


def sha_of(root: Path, rel: str) -> str:
    return hashlib.sha256((root / rel).read_bytes()).hexdigest()


def wait_for(predicate, timeout: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


# --- install / uninstall / status ----------------------------------------------------------


def test_install_writes_marked_executable_shims_and_registers_the_driver(hooked: Vault) -> None:
    hooks_dir = hooked.root / ".git" / "hooks"
    for name in CLIENT_HOOKS:
        shim = hooks_dir / name
        assert os.access(shim, os.X_OK)
        assert mvhooks.shim_version(shim) == mvhooks.SHIM_VERSION
        assert sys.executable in shim.read_text()
        assert subprocess.run(["sh", "-n", str(shim)]).returncode == 0  # POSIX sh syntax
    assert not (hooks_dir / "post-receive").exists()
    st = mvhooks.status(hooked.root)
    assert st.ok and st.merge_driver and st.attributes
    assert (
        git(hooked.root, "config", "merge.memvault.driver")
        .strip()
        .endswith("merge-driver %O %A %B %P")
    )


def test_reinstall_is_idempotent_and_upgrades_old_shims(hooked: Vault) -> None:
    again = mvhooks.install(hooked.root)
    assert {a.action for a in again.actions} == {"unchanged"}
    shim = hooked.root / ".git" / "hooks" / "post-commit"
    shim.write_text(shim.read_text().replace(f"version={mvhooks.SHIM_VERSION}", "version=0"))
    assert mvhooks.status(hooked.root).hooks[1].state == "outdated"
    upgraded = {a.hook: a for a in mvhooks.install(hooked.root).actions}
    assert (
        upgraded["post-commit"].action == "upgraded"
        and "from version 0" in upgraded["post-commit"].detail
    )
    assert mvhooks.shim_version(shim) == mvhooks.SHIM_VERSION
    assert not (shim.parent / "post-commit.legacy").exists()  # our own shim is never "legacy"


def version_1_shim(name: str) -> str:
    """A shim as memvault's shim version 1 wrote it (it ran ``python -m memvault.hooks``)."""
    fail_status = 1 if name == "pre-commit" else 0
    kind = "validation hook: blocks on a problem" if fail_status else "reindex hook: fails open"
    internal = ""
    if name != "pre-commit":
        internal = (
            'if [ "${MEMVAULT_INTERNAL:-}" = 1 ]; then\n'
            "    # memvault's own git commands: it keeps its catalog and index fresh by itself.\n"
            '    legacy="$HERE/$HOOK.legacy"\n'
            '    if [ -x "$legacy" ]; then exec "$legacy" "$@"; fi\n'
            "    exit 0\n"
            "fi\n"
        )
    return f"""#!/bin/sh
# memvault-hook-shim version=1 hook={name}
# Installed by 'memvault hooks install' ({kind}). 'memvault hooks uninstall' removes it
# and restores the hook that was here before (kept meanwhile as {name}.legacy, run first).
HOOK={name}
MEMVAULT_PYTHON={sys.executable}
MEMVAULT_VAULT_DIR=.
HERE=$(cd "$(dirname "$0")" && pwd)
{internal}if [ -n "$MEMVAULT_PYTHON" ] && [ -x "$MEMVAULT_PYTHON" ]; then
    exec "$MEMVAULT_PYTHON" -P -m memvault.hooks \\
        --hooks-dir "$HERE" --vault-dir "$MEMVAULT_VAULT_DIR" "$HOOK" -- "$@"
fi
if command -v memvault >/dev/null 2>&1; then
    exec memvault hook-run --hooks-dir "$HERE" --vault-dir "$MEMVAULT_VAULT_DIR" "$HOOK" -- "$@"
fi
echo "memvault: $HOOK hook: memvault not found ($MEMVAULT_PYTHON is gone, none on PATH);" \\
    "run 'memvault hooks install' again, or 'memvault hooks uninstall'" >&2
if [ -x "$HERE/$HOOK.legacy" ]; then "$HERE/$HOOK.legacy" "$@" || exit $?; fi
exit {fail_status}
"""


def test_version_1_shims_keep_working_until_install_upgrades_them(vault: Vault) -> None:
    hooks_dir = vault.root / ".git" / "hooks"
    hooks_dir.mkdir(exist_ok=True)
    for name in ("pre-commit", "post-commit"):
        (hooks_dir / name).write_text(version_1_shim(name))
        (hooks_dir / name).chmod(0o755)
    states = {h.hook: h for h in mvhooks.status(vault.root).hooks}
    assert states["post-commit"].state == "outdated" and states["post-commit"].version == 1
    # The old shims still validate and reindex (through memvault.hooks).
    write(vault.root, "semantic/facts/bad.md", "---\nid: bad\ntype: semantic\ntags: x\n---\n\nx\n")
    git(vault.root, "add", "-A")
    proc = run_git(vault.root, "commit", "-q", "-m", "bad")
    assert proc.returncode == 1 and "bad.md: tags: expected a list" in proc.stderr
    git(vault.root, "rm", "-q", "--cached", "semantic/facts/bad.md")
    (vault.root / "semantic/facts/bad.md").unlink()
    rel = add_fact(vault.root, "old-shim", "Indexed by a version 1 shim.")
    git(vault.root, "add", "-A")
    proc = run_git(vault.root, "commit", "-q", "-m", "old shim")
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: indexed(vault.root).get(rel) == sha_of(vault.root, rel))
    settle(vault.root)
    # install upgrades them in place (never keeps our own old shim as a legacy hook).
    actions = {a.hook: a for a in mvhooks.install(vault.root).actions}
    for name in ("pre-commit", "post-commit"):
        assert actions[name].action == "upgraded" and actions[name].detail == "from version 1"
        assert mvhooks.shim_version(hooks_dir / name) == mvhooks.SHIM_VERSION
        assert "-m memvault.githooks" in (hooks_dir / name).read_text()
        assert not (hooks_dir / f"{name}.legacy").exists()
    assert mvhooks.status(vault.root).ok


def test_foreign_hook_is_kept_as_legacy_chained_and_restored(vault: Vault) -> None:
    hooks_dir = vault.root / ".git" / "hooks"
    hooks_dir.mkdir(exist_ok=True)
    foreign = hooks_dir / "post-commit"
    foreign.write_text('#!/bin/sh\necho "legacy ran" >> "$(git rev-parse --git-dir)/legacy.out"\n')
    foreign.chmod(0o755)
    original = foreign.read_text()
    report = mvhooks.install(vault.root)
    action = {a.hook: a for a in report.actions}["post-commit"]
    assert action.action == "installed" and "post-commit.legacy" in action.detail
    assert (hooks_dir / "post-commit.legacy").read_text() == original
    assert mvhooks.status(vault.root).hooks[1].legacy
    add_fact(vault.root, "chained")
    git(vault.root, "add", "-A")
    proc = run_git(vault.root, "commit", "-q", "-m", "chained")
    assert proc.returncode == 0, proc.stderr
    assert (vault.root / ".git" / "legacy.out").read_text() == "legacy ran\n"
    assert wait_for(lambda: hook_runs(vault.root, "post-commit") == 1)
    settle(vault.root)
    mvhooks.uninstall(vault.root)
    assert foreign.read_text().startswith('#!/bin/sh\necho "legacy ran"')
    assert mvhooks.shim_version(foreign) is None
    assert not (hooks_dir / "post-commit.legacy").exists()
    assert not (hooks_dir / "pre-commit").exists()


def test_a_failing_legacy_pre_commit_still_blocks(vault: Vault) -> None:
    hooks_dir = vault.root / ".git" / "hooks"
    hooks_dir.mkdir(exist_ok=True)
    (hooks_dir / "pre-commit").write_text("#!/bin/sh\necho 'legacy says no' >&2\nexit 3\n")
    (hooks_dir / "pre-commit").chmod(0o755)
    mvhooks.install(vault.root)
    add_fact(vault.root, "fine")
    git(vault.root, "add", "-A")
    proc = run_git(vault.root, "commit", "-q", "-m", "x")
    assert proc.returncode != 0 and "legacy says no" in proc.stderr


def test_foreign_hook_and_existing_legacy_are_not_clobbered(vault: Vault) -> None:
    hooks_dir = vault.root / ".git" / "hooks"
    hooks_dir.mkdir(exist_ok=True)
    for name in ("post-merge", "post-merge.legacy"):
        (hooks_dir / name).write_text(f"#!/bin/sh\n# {name}\n")
    report = mvhooks.install(vault.root)
    assert not report.ok
    assert {a.hook: a.action for a in report.actions}["post-merge"] == "skipped"
    assert (hooks_dir / "post-merge").read_text() == "#!/bin/sh\n# post-merge\n"


def test_core_hooks_path_is_respected(vault: Vault) -> None:
    git(vault.root, "config", "core.hooksPath", ".githooks")
    report = mvhooks.install(vault.root)
    assert Path(report.hooks_dir) == vault.root / ".githooks"
    assert mvhooks.shim_version(vault.root / ".githooks" / "pre-commit") is not None
    assert not (vault.root / ".git" / "hooks" / "pre-commit").exists()
    write(
        vault.root, "semantic/facts/bad.md", "---\nid: bad\ntype: semantic\ntags: oops\n---\n\nx\n"
    )
    git(vault.root, "add", "semantic/facts/bad.md")
    proc = run_git(vault.root, "commit", "-q", "-m", "bad")
    assert proc.returncode == 1 and "tags: expected a list" in proc.stderr


def test_bare_and_non_bare_are_told_apart(vault: Vault, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="bare"):
        mvhooks.install(vault.root, bare=True)
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(Exception, match="--bare"):
        mvhooks.install(bare, bare=False)


# --- pre-commit ------------------------------------------------------------------------------


def test_pre_commit_blocks_invalid_and_secret_staged_files(checked: Vault) -> None:
    root = checked.root
    write(root, "semantic/facts/bad.md", "---\nid: bad\ntype: semantic\ntags: oops\n---\n\nx\n")
    git(root, "add", "-A")
    proc = run_git(root, "commit", "-q", "-m", "bad")
    assert proc.returncode == 1
    assert "Error: semantic/facts/bad.md: tags: expected a list, got a string" in proc.stderr
    assert "--no-verify" in proc.stderr
    git(root, "reset", "-q")
    (root / "semantic/facts/bad.md").unlink()
    add_fact(root, "leak", f"The deploy key is {SECRET}.")
    git(root, "add", "-A")
    proc = run_git(root, "commit", "-q", "-m", "leak")
    assert (
        proc.returncode == 1
        and "semantic/facts/leak.md: content: looks like a AWS access key" in proc.stderr
    )
    # --no-verify stays the escape hatch
    assert run_git(root, "commit", "-q", "--no-verify", "-m", "forced").returncode == 0


def test_pre_commit_checks_the_staged_version_not_the_working_tree(checked: Vault) -> None:
    root = checked.root
    rel = add_fact(root, "staged")
    good = (root / rel).read_text()
    (root / rel).write_text(good.replace("tags: [t]", "tags: t"))
    git(root, "add", rel)
    (root / rel).write_text(good)  # fixed on disk, but not staged
    assert run_git(root, "commit", "-q", "-m", "x").returncode == 1
    git(root, "add", rel)
    (root / rel).write_text(good.replace("type: semantic", "type: nonsense"))  # broken on disk only
    proc = run_git(root, "commit", "-q", "-m", "x")
    assert proc.returncode == 0, proc.stderr


def test_pre_commit_sees_commit_a_temporary_index(checked: Vault) -> None:
    root = checked.root
    rel = add_fact(root, "tracked")
    git(root, "add", rel)
    assert run_git(root, "commit", "-q", "-m", "ok").returncode == 0
    (root / rel).write_text((root / rel).read_text().replace("tags: [t]", "tags: t"))
    proc = run_git(root, "commit", "-q", "-a", "-m", "via -a")
    assert proc.returncode == 1 and "tags: expected a list" in proc.stderr
    proc = run_git(root, "commit", "-q", "-m", "via pathspec", "--", rel)
    assert proc.returncode == 1


def test_pre_commit_ignores_files_outside_the_memory_trees(checked: Vault) -> None:
    write(checked.root, "notes/whatever.md", "no front matter at all\n")
    write(checked.root, "README.md", "# changed\n")
    git(checked.root, "add", "-A")
    assert run_git(checked.root, "commit", "-q", "-m", "docs").returncode == 0


def test_pre_commit_validates_100_files_in_one_process_quickly(hooked: Vault) -> None:
    for i in range(100):
        add_fact(hooked.root, f"bulk-{i:03d}", f"Bulk fact number {i}.")
    git(hooked.root, "add", "-A")
    problems, checked = check_staged(hooked, hooked.root)
    assert problems == [] and checked == 100
    # The whole hook, as git runs it: one process for all 100 files.
    start = time.perf_counter()
    proc = subprocess.run(
        [str(hooked.root / ".git" / "hooks" / "pre-commit")],
        cwd=hooked.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 5  # the real budget (1 s) is measured by bench/hooks.py on a quiet machine


# --- reindex hooks -----------------------------------------------------------------------------


def test_post_commit_reindexes_the_committed_file_in_the_background(hooked: Vault) -> None:
    rel = add_fact(hooked.root, "fresh", "Freshly committed fact about zebras.")
    git(hooked.root, "add", "-A")
    proc = run_git(hooked.root, "commit", "-q", "-m", "fresh")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert wait_for(lambda: indexed(hooked.root).get(rel) == sha_of(hooked.root, rel))
    # the hook logs "ok" just after its index write lands: wait for the line, too
    assert wait_for(lambda: "post-commit: ok" in hook_log(hooked.root))
    assert hook_runs(hooked.root, "post-commit") == 1
    assert "fresh" in hooked.search("zebras").ids


def test_post_commit_can_wait_for_the_index(hooked: Vault) -> None:
    git(hooked.root, "config", "memvault.hookTimeout", "120")
    rel = add_fact(hooked.root, "waited", "Indexed before git returns.")
    git(hooked.root, "add", "-A")
    proc = run_git(hooked.root, "commit", "-q", "-m", "waited")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert indexed(hooked.root).get(rel) == sha_of(hooked.root, rel)


def test_memvault_own_commits_skip_the_hook_shim(hooked: Vault) -> None:
    hooked.add("semantic", "Written through memvault.", id="internal")
    assert hook_runs(hooked.root, "post-commit") == 0
    assert hook_log(hooked.root) == ""


def test_merge_checkout_rewrite_and_push_hooks_fire(hooked: Vault, tmp_path: Path) -> None:
    root = hooked.root
    add_fact(root, "base-fact")
    git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base")
    assert run_git(root, "checkout", "-q", "-b", "feature").returncode == 0
    assert hook_runs(root, "post-checkout") == 0  # same commit: nothing to do
    feature_rel = add_fact(root, "feature-fact", "Only on the feature branch.")
    git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "feature")
    assert wait_for(lambda: indexed(root).get(feature_rel) == sha_of(root, feature_rel))
    run_git(root, "checkout", "-q", "main")
    assert wait_for(lambda: hook_runs(root, "post-checkout") == 1)
    assert wait_for(
        lambda: feature_rel not in indexed(root)
    )  # gone from the tree, gone from the index
    proc = run_git(root, "merge", "-q", "--no-ff", "--no-edit", "feature")
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: hook_runs(root, "post-merge") == 1)
    assert wait_for(lambda: indexed(root).get(feature_rel) == sha_of(root, feature_rel))
    before = hook_runs(root, "post-rewrite")
    run_git(root, "commit", "-q", "--amend", "-m", "merge, amended")
    assert wait_for(lambda: hook_runs(root, "post-rewrite") == before + 1)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    proc = run_git(root, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: hook_runs(root, "pre-push") == 1)


def test_rebase_reindexes_once_at_the_end(hooked: Vault) -> None:
    root = hooked.root
    git(root, "checkout", "-q", "-b", "topic")
    for i in range(3):
        add_fact(root, f"topic-{i}")
        git(root, "add", "-A")
        run_git(root, "commit", "-q", "-m", f"topic {i}")
    git(root, "checkout", "-q", "main")
    write(root, "README.md", "# main moved on\n")
    git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "topic")
    counts = {n: hook_runs(root, n) for n in ("post-commit", "post-checkout", "post-rewrite")}
    proc = run_git(root, "rebase", "main")
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: hook_runs(root, "post-rewrite") == counts["post-rewrite"] + 1)
    time.sleep(0.5)  # a stray post-commit child would have logged its start by now
    assert hook_runs(root, "post-commit") == counts["post-commit"]
    assert hook_runs(root, "post-checkout") == counts["post-checkout"]


def test_reindex_failure_fails_open_with_one_line(hooked: Vault) -> None:
    broken = {"MEMVAULT_EMBEDDER": "no-such-model"}
    add_fact(hooked.root, "x")
    git(hooked.root, "add", "-A")
    proc = run_git(
        hooked.root, "commit", "-q", "-m", "x", env={**broken, "MEMVAULT_HOOK_TIMEOUT": "120"}
    )
    assert proc.returncode == 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(
        "memvault: post-commit: warning: reindex failed"
    ), lines
    assert git(hooked.root, "log", "-1", "--format=%s").strip() == "x"


def test_a_background_failure_is_reported_by_the_next_hook(hooked: Vault) -> None:
    broken = {"MEMVAULT_EMBEDDER": "no-such-model"}
    add_fact(hooked.root, "y")
    git(hooked.root, "add", "-A")
    proc = run_git(hooked.root, "commit", "-q", "-m", "y", env=broken)
    assert proc.returncode == 0 and proc.stderr == ""
    last = hooked.root / ".git" / "memvault" / LAST_ERROR
    assert wait_for(last.exists)
    assert any("failed" in n for n in mvhooks.status(hooked.root).notes)
    proc = run_git(hooked.root, "commit", "-q", "--allow-empty", "-m", "next")
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert (
        len(lines) == 1
        and "the last reindex (post-commit" in lines[0]
        and "failed in the background" in lines[0]
    )
    proc = run_git(hooked.root, "commit", "-q", "--allow-empty", "-m", "and next")
    assert proc.stderr == ""  # reported once


def test_busy_index_is_skipped_not_waited_for(hooked: Vault) -> None:
    add_fact(hooked.root, "busy")
    git(hooked.root, "add", "-A")
    with file_lock(hooked.root / LOCK_PATH):
        start = time.perf_counter()
        proc = run_git(
            hooked.root, "commit", "-q", "-m", "busy", env={"MEMVAULT_HOOK_TIMEOUT": "120"}
        )
        elapsed = time.perf_counter() - start
    assert proc.returncode == 0
    assert "index busy" in proc.stderr
    assert elapsed < 20  # did not wait for the lock (held until after git returned)
    assert (hooked.root / ".git" / "memvault" / PENDING).exists()  # queued for later


def test_a_reindex_longer_than_the_timeout_moves_to_the_background(hooked: Vault) -> None:
    rel = add_fact(hooked.root, "later", "Indexed in the background.")
    git(hooked.root, "add", "-A")
    proc = run_git(
        hooked.root, "commit", "-q", "-m", "later", env={"MEMVAULT_HOOK_TIMEOUT": "0.01"}
    )
    assert proc.returncode == 0
    assert "still running after 0.01 s; it finishes in the background" in proc.stderr
    assert wait_for(lambda: indexed(hooked.root).get(rel) == sha_of(hooked.root, rel))
    assert wait_for(lambda: "post-commit: ok" in hook_log(hooked.root))


def test_shim_falls_back_to_path_then_fails_politely(vault: Vault, tmp_path: Path) -> None:
    mvhooks.install(vault.root, python="/nonexistent/python3")
    add_fact(vault.root, "fallback")
    git(vault.root, "add", "-A")
    venv_bin = str(Path(sys.executable).parent)
    # memvault on PATH: the shim uses it.
    proc = run_git(
        vault.root,
        "commit",
        "-q",
        "-m",
        "via PATH",
        env={"PATH": f"{venv_bin}:{os.environ['PATH']}"},
    )
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: hook_runs(vault.root, "post-commit") == 1)
    settle(vault.root)
    # No memvault anywhere: reindex hooks warn and let git go on; pre-commit blocks.
    bare_path = "/usr/bin:/bin"
    add_fact(vault.root, "nowhere")
    git(vault.root, "add", "-A")
    proc = run_git(vault.root, "commit", "-q", "-m", "no memvault", env={"PATH": bare_path})
    assert proc.returncode == 1 and "memvault not found" in proc.stderr
    proc = run_git(
        vault.root, "commit", "-q", "--no-verify", "-m", "no memvault", env={"PATH": bare_path}
    )
    assert proc.returncode == 0 and "memvault not found" in proc.stderr


# --- server side -----------------------------------------------------------------------------


@pytest.fixture
def bare_remote(tmp_path: Path) -> Iterator[Path]:
    remote = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    yield remote


def test_post_receive_indexes_the_pushed_branch(bare_remote: Path, tmp_path: Path) -> None:
    report = mvhooks.install(bare_remote, bare=True)
    assert [a.hook for a in report.actions] == ["post-receive"] and report.merge_driver is None
    assert mvhooks.status(bare_remote).ok
    a = Vault.init(tmp_path / "a")
    rel = add_fact(a.root, "pushed", "Pushed to the team remote.")
    git(a.root, "add", "-A")
    git(a.root, "commit", "-q", "-m", "pushed")
    git(a.root, "remote", "add", "origin", str(bare_remote))
    proc = run_git(a.root, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert "remote: memvault: post-receive: main: indexed" in proc.stderr
    worktree = bare_remote / "memvault" / "worktrees" / "main"
    assert indexed(worktree).get(rel) == sha_of(a.root, rel)
    # A second push moves the same worktree forward (incrementally) and drops deletions.
    (a.root / rel).unlink()
    rel2 = add_fact(a.root, "second", "Second push.")
    git(a.root, "add", "-A")
    git(a.root, "commit", "-q", "-m", "second")
    assert run_git(a.root, "push", "-q", "origin", "main").returncode == 0
    docs = indexed(worktree)
    assert rel not in docs and docs.get(rel2) == sha_of(a.root, rel2)
    assert git(worktree, "rev-parse", "HEAD") == git(a.root, "rev-parse", "HEAD")


def test_post_receive_runs_for_a_push_made_by_memvault_sync(
    bare_remote: Path, tmp_path: Path
) -> None:
    from memvault.sync import sync

    mvhooks.install(bare_remote, bare=True)
    a = Vault.init(tmp_path / "a")
    git(a.root, "remote", "add", "origin", str(bare_remote))
    a.add("semantic", "Synced to the team.", id="synced")
    report = sync(a.core)
    assert report.pushed == 2
    assert any(n.startswith("remote memvault: post-receive: main: indexed") for n in report.notes)
    worktree = bare_remote / "memvault" / "worktrees" / "main"
    assert "semantic/facts/synced.md" in indexed(worktree)


def test_post_receive_records_index_url_and_queues_concurrent_updates(bare_remote: Path) -> None:
    mvhooks.install(bare_remote, bare=True, index_url="http://127.0.0.1:9")
    assert mvhooks.status(bare_remote).index_url == "http://127.0.0.1:9"
    assert server_index_url(bare_remote) == "http://127.0.0.1:9"
    base = state_dir(bare_remote)
    with file_lock(base / "post-receive.lock"):  # as an update in progress holds it
        result = update_server_index(bare_remote, ["main"])
    assert "queued main" in result["message"]
    assert (base / "pending").read_text().split() == ["main"]


# --- CLI -----------------------------------------------------------------------------------------


def test_cli_install_status_uninstall(vault: Vault, cli, chdir) -> None:  # type: ignore[no-untyped-def]
    import json

    chdir(vault.root)
    result = cli("hooks", "status", "--json")
    assert result.code == 1 and json.loads(result.out)["ok"] is False
    result = cli("hooks", "install", "--json")
    assert result.code == 0
    assert {a["hook"] for a in json.loads(result.out)["actions"]} == set(CLIENT_HOOKS)
    result = cli("hooks", "status")
    assert result.code == 0 and "installed  post-commit" in result.out
    result = cli("hooks", "uninstall")
    assert result.code == 0
    assert not (vault.root / ".git" / "hooks" / "post-commit").exists()


def test_cli_install_bare(bare_remote: Path) -> None:
    proc = run_memvault("hooks", "install", "--bare", cwd=bare_remote)
    assert proc.returncode == 0, proc.stderr
    assert mvhooks.shim_version(bare_remote / "hooks" / "post-receive") == mvhooks.SHIM_VERSION
    proc = run_memvault("hooks", "install", cwd=bare_remote)
    assert proc.returncode == 1 and "--bare" in proc.stderr


def test_pre_commit_framework_hook_definition(tmp_path: Path, vault: Vault) -> None:
    from ruamel.yaml import YAML

    spec = YAML(typ="safe").load((Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text())
    hook = {h["id"]: h for h in spec}["memvault-check"]
    assert hook["language"] == "python" and hook["pass_filenames"] is True
    # What the framework runs: the entry plus the staged file names, from the repo top.
    good = add_fact(vault.root, "framework-good")
    bad = "semantic/facts/framework-bad.md"
    write(vault.root, bad, "---\nid: framework-bad\ntype: semantic\ntags: x\n---\n\nx\n")
    entry = hook["entry"].split()
    proc = run_memvault(*entry[1:], good, "README.md", cwd=vault.root)
    assert proc.returncode == 0, proc.stderr
    proc = run_memvault(*entry[1:], good, bad, cwd=vault.root)
    assert proc.returncode == 1 and "framework-bad.md: tags" in proc.stderr
