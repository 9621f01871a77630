"""A commit of a few staged files in one ``git fast-import`` process.

``write-tree`` + ``diff-tree`` + ``commit-tree`` + ``update-ref`` are four processes; fast-import
reads the parent's tree, writes the new trees and the commit and moves the branch in one
(``docs/performance.md``). It changes exactly the paths it is given, whatever else the user
has staged (``git commit --only``), and moves the branch only if it still points at the
parent (else it fails and the caller commits the slower way).

It is used only when git keeps a file's bytes as they are: no line-ending conversion, filter
or encoding for these paths, a plain SHA-1 repository whose config this module can read.
Otherwise :func:`commit` says "not done" and the caller commits with plumbing as before.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .process import Identity, no_git_env

MAX_PATHS = 64  # more paths (an import): the plumbing commit, whose cost doesn't grow per path

# Attributes that make git store other bytes than the file's (or run a program on them).
_CONVERTING = re.compile(r"(?:^|\s)[-!]?(?:text|eol|crlf|filter|ident|working-tree-encoding)\b")


def commit(
    root: Path,
    git: Path,
    ref: str,
    parent: str,
    message: str,
    identity: Identity,
    add: Sequence[str],
    remove: Sequence[str],
    ready: Callable[[], None] = lambda: None,
) -> tuple[bool, str | None]:
    """Commit the files at ``add`` (as they are on disk; a missing one is removed) and remove
    ``remove``, on ``ref`` whose tip is ``parent``. Returns (True, sha or None when the tree
    would not change), or (False, None) when this can't be done here (see the module).

    ``ready`` is called just before the commit is made (the index update the caller began:
    an error it raises ends fast-import without a commit, and is raised here)."""
    if not add and not remove or len(add) + len(remove) > MAX_PATHS:
        return False, None
    if len(parent) != 40 or not keeps_bytes(root, git, [*add, *remove]):
        return False, None
    entries: dict[str, tuple[str, bytes] | None] = {}  # path -> (mode, bytes); None: delete
    for rel in add:
        try:
            st = os.lstat(root / rel)
            if not stat.S_ISREG(st.st_mode):
                return False, None  # a symlink or a folder: git's own rules
            data = (root / rel).read_bytes()
        except FileNotFoundError:
            entries[rel] = None
            continue
        except OSError:
            return False, None
        entries[rel] = ("100755" if st.st_mode & stat.S_IXUSR else "100644", data)
    for rel in remove:
        entries[rel] = None
    if any(not _plain_path(rel) for rel in entries):
        return False, None
    dates = _dates()
    if dates is None:
        return False, None
    env = no_git_env(
        {
            "MEMVAULT_INTERNAL": "1",
            "GIT_COMMITTER_NAME": identity.name,  # the reflog entry's name
            "GIT_COMMITTER_EMAIL": identity.email,
        }
    )
    options = ["-c", "core.fsync=-pack"] if _pack_is_loosened(git, len(entries)) else []
    try:
        return _run(root, env, ref, parent, message, identity, entries, dates, ready, options)
    except OSError:  # fast-import stopped reading or answering: the slow way
        return False, None


def _run(
    root: Path,
    env: dict[str, str],
    ref: str,
    parent: str,
    message: str,
    identity: Identity,
    entries: dict[str, tuple[str, bytes] | None],
    dates: str,
    ready: Callable[[], None],
    options: list[str],
) -> tuple[bool, str | None]:
    with _Conversation(root, env, options=options) as git_proc:
        # What the parent holds at each path, so that only real changes are committed.
        git_proc.send("".join(f"ls {parent} {rel}\n" for rel in entries).encode())
        # (its answers come in the order asked; their paths may be quoted: not read)
        held = {rel: _parse_ls(git_proc.read_line()) for rel in entries}
        if any(h is not None and not h[1] for h in held.values()):
            return False, None  # a folder or a submodule there: git's own rules
        commands: list[bytes] = []
        for rel, entry in entries.items():
            if entry is None:
                if held.get(rel) is not None:
                    commands.append(f"D {rel}\n".encode())
                continue
            mode, data = entry
            if held.get(rel) != (mode, _blob_sha(data)):
                commands.append(f"M {mode} inline {rel}\ndata {len(data)}\n".encode())
                commands.append(data + b"\n")
        if not commands:
            return True, None  # (the process ends without a commit)
        ready()  # (raising: the input ends here, with no commit in it)
        who = f"{identity.name} <{identity.email}> {dates}"
        text = (message + "\n").encode("utf-8")
        git_proc.send(
            f"commit {ref}\nmark :1\nauthor {who}\ncommitter {who}\ndata {len(text)}\n".encode()
            + text
            + f"from {parent}\n".encode()
            + b"".join(commands)
            + b"\nget-mark :1\n"
        )
        sha = git_proc.read_line().decode("ascii", "replace").strip()
        code = git_proc.finish()
    if code != 0 or len(sha) != 40:
        return False, None  # the branch moved meanwhile, or fast-import failed: the slow way
    return True, sha


def keeps_bytes(root: Path, git: Path, paths: Sequence[str]) -> bool:
    """Whether git would store each of ``paths`` as the bytes of its file: no conversion in
    the config or any attributes file that can apply, in a SHA-1 repository. False when
    unsure (a config this reader doesn't follow: includes, ``GIT_CONFIG_*`` overrides)."""
    if any(k.startswith("GIT_CONFIG") and k not in _FOLLOWED for k in os.environ):
        return False
    for config in _config_files(git):
        settings = _read_config(config)
        if settings is None:
            return False
        autocrlf = settings.get("core.autocrlf", "false").lower()
        if autocrlf not in ("false", "no", "off", "0"):
            return False
        if settings.get("core.filemode", "true").lower() in ("false", "no", "off", "0"):
            return False
        if settings.get("extensions.objectformat", "sha1").lower() != "sha1":
            return False
        if any(k in settings for k in ("core.attributesfile", "core.hookspath")):
            return False
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    attributes = [
        git / "info" / "attributes",
        Path(xdg, "git", "attributes"),
        root / ".gitattributes",
    ]
    if os.environ.get("GIT_ATTR_NOSYSTEM") != "1":
        attributes.append(Path("/etc/gitattributes"))
    folders = {rel.rpartition("/")[0] for rel in paths}
    for folder in sorted(folders):
        parts = folder.split("/") if folder else []
        attributes += [root.joinpath(*parts[: i + 1], ".gitattributes") for i in range(len(parts))]
    return not any(_converts(path) for path in dict.fromkeys(attributes))


# A commit of this many files has few enough objects (a blob each, the trees above it, the
# commit) that fast-import loosens them (git's default fastimport.unpackLimit: 100).
LOOSENED_PATHS = 16
# Settings that say how durable objects must be, or when fast-import keeps its pack.
_DURABILITY = (
    "core.fsync",
    "core.fsyncobjectfiles",
    "core.fsyncmethod",
    "fastimport.unpacklimit",
    "transfer.unpacklimit",
)


def _pack_is_loosened(git: Path, paths: int) -> bool:
    """Whether fast-import's pack will surely be loosened into loose objects, with git's
    default durability: then fsyncing the pack (git's default for packs) is a wait for a
    file deleted a moment later, and the loose objects are synced no more than ``git commit``
    syncs its own (not at all, by default). False when unsure."""
    if paths > LOOSENED_PATHS:
        return False
    for config in _config_files(git):
        settings = _read_config(config)
        if settings is None or any(key in settings for key in _DURABILITY):
            return False
    return True


# GIT_CONFIG_* variables whose effect _config_files follows; any other one: not sure.
_FOLLOWED = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")


def _config_files(git: Path) -> list[Path]:
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [git / "config"]
    explicit = os.environ.get("GIT_CONFIG_GLOBAL")
    files += (
        [Path(explicit)] if explicit else [Path(home, ".gitconfig"), Path(xdg, "git", "config")]
    )
    if os.environ.get("GIT_CONFIG_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        files.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    return files


_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(?:[#;].*)?$')
_ENTRY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def _read_config(path: Path) -> dict[str, str] | None:
    """``{section.key: value}`` of a git config file (the last value wins; no file: empty),
    for sections without a subsection; None when the file holds what this reader doesn't
    follow (an include, a value continued on the next line, a line it can't parse)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError):
        return None
    section: str | None = None
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        found = _SECTION.match(line)
        if found:
            name = found.group(1).lower()
            if name.startswith("include"):
                return None
            section = None if found.group(2) is not None else name
            continue
        entry = _ENTRY.match(line)
        if entry is None or line.endswith("\\"):
            return None
        if section is not None:
            value = (entry.group(2) or "true").split("#")[0].split(";")[0].strip().strip('"')
            out[f"{section}.{entry.group(1).lower()}"] = value
    return out


def _converts(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable: can't tell
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and not parts[0].startswith("#") and _CONVERTING.search(parts[1]):
            return True
    return False


def _plain_path(rel: str) -> bool:
    """A path fast-import reads as written: the rest of its line, not C-quoted."""
    return bool(rel) and not rel.startswith('"') and not any(c in rel for c in "\n\r\0")


def _dates() -> str | None:
    """``<seconds> <+hhmm>`` for now, in this machine's time zone; None when the environment
    sets the commit's dates (``GIT_AUTHOR_DATE``, ``GIT_COMMITTER_DATE``: git parses those)."""
    if os.environ.get("GIT_AUTHOR_DATE") or os.environ.get("GIT_COMMITTER_DATE"):
        return None
    now = time.time()
    offset = time.localtime(now).tm_gmtoff // 60
    sign = "+" if offset >= 0 else "-"
    return f"{int(now)} {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def _blob_sha(data: bytes) -> str:
    from _sha1 import sha1  # CPython's built-in: hashlib would load OpenSSL

    return str(sha1(b"blob %d\0" % len(data) + data).hexdigest())


def _parse_ls(line: bytes) -> tuple[str, str] | None:
    """fast-import's answer to ``ls``: ``<mode> blob <sha>\\t<path>`` gives (mode, sha);
    ``missing <path>`` None; anything else (a folder, a submodule) ("", "")."""
    text = line.decode("utf-8", "replace")
    if text.startswith("missing "):
        return None
    mode, kind, sha = (text.partition("\t")[0].split(" ") + ["", "", ""])[:3]
    return (mode, sha) if kind == "blob" and len(sha) == 40 else ("", "")


class _Conversation:
    """``git fast-import`` in ``root``, talked to line by line (its answers to ``ls`` come
    before the commit is written)."""

    def __init__(self, root: Path, env: dict[str, str], options: Sequence[str] = ()) -> None:
        import _signal

        self._in_r, self._in_w = os.pipe()
        self._out_r, out_w = os.pipe()
        self._err_r, err_w = os.pipe()
        argv = ["git", "-C", str(root), *options, "fast-import", "--quiet", "--date-format=raw"]
        try:
            self._pid = os.posix_spawnp(
                "git",
                argv,
                env,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, self._in_r, 0),
                    (os.POSIX_SPAWN_DUP2, out_w, 1),
                    (os.POSIX_SPAWN_DUP2, err_w, 2),
                ],
                setsigdef=(_signal.SIGPIPE,),
            )
        finally:
            for fd in (self._in_r, out_w, err_w):
                os.close(fd)
        self._buffer = b""
        self._code: int | None = None

    def __enter__(self) -> _Conversation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in_w, view) :]

    def read_line(self) -> bytes:
        while b"\n" not in self._buffer:
            chunk = os.read(self._out_r, 65536)
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def finish(self) -> int:
        """End the input, wait for git; its exit code."""
        if self._code is None:
            os.close(self._in_w)
            while os.read(self._out_r, 65536):
                pass
            while os.read(self._err_r, 65536):  # (its messages: the caller falls back)
                pass
            os.close(self._out_r)
            os.close(self._err_r)
            _, status = os.waitpid(self._pid, 0)
            self._code = os.waitstatus_to_exitcode(status)
        return self._code
