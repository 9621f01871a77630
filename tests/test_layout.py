"""The shape of the code: imports point one way, heavy libraries load lazily, modules stay small.

adapters (cli, mcp_server, watch, hooks) -> services -> model (memory, files, embeddings)
-> base (config, errors).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "memvault"
ADAPTERS = (
    "memvault.cli",
    "memvault.mcp_server",
    "memvault.watch",
    "memvault.githooks",
    "memvault.hooks",
    "memvault.ui",
    "memvault.integrations",
    "memvault.resident",
)
# store.lock is the one lock primitive: any layer may take a lock, so it counts as base.
BASE = (
    "memvault.errors",
    "memvault.values",
    "memvault.paths",
    "memvault.config",
    "memvault.threads",
    "memvault.store.lock",
    "memvault.vocabulary",  # the contract's words: imports nothing
)
MODEL = ("memvault.memory", "memvault.store.files", "memvault.embeddings")
UI_LIBS = ("typer", "rich", "click")
HEAVY = ("chromadb", "torch", "sentence_transformers", "mcp", "watchdog", "numpy", "onnxruntime")

# tools/layout.py holds the import graph, the cycle finder and the size limits; the tests
# below hold the code to it (``python tools/layout.py`` prints the same findings).
_spec = importlib.util.spec_from_file_location(
    "memvault_layout_tool", SRC.parent.parent / "tools" / "layout.py"
)
assert _spec is not None and _spec.loader is not None
layout_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layout_tool)
MAX_LINES = layout_tool.MAX_MODULE_LINES


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    module = _module_name(path)
    package = module if _is_package(path) else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                if node.module:
                    found.add(f"{prefix}.{node.module}")
                else:
                    found.update(f"{prefix}.{alias.name}" for alias in node.names)
            elif node.module:
                found.add(node.module)
    return found


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


SOURCES = sorted(SRC.rglob("*.py"))
MODULES = {_module_name(p): p for p in SOURCES}


def test_sources_found() -> None:
    assert "memvault.vault" in MODULES and "memvault.cli" in MODULES


def test_only_adapters_import_typer_rich_or_click() -> None:
    offenders = {
        name: sorted(i for i in _imports(path) if _under(i, UI_LIBS))
        for name, path in MODULES.items()
        if not _under(name, ADAPTERS)
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_core_never_imports_adapters() -> None:
    offenders = {
        name: sorted(i for i in _imports(path) if _under(i, ADAPTERS))
        for name, path in MODULES.items()
        if not _under(name, ADAPTERS) and name not in ("memvault.__main__",)
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_model_and_base_import_only_downwards() -> None:
    offenders: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if _under(name, BASE):
            allowed = BASE
        elif _under(name, MODEL):
            allowed = BASE + MODEL
        else:
            continue
        bad = sorted(
            i for i in _imports(path) if i.startswith("memvault") and not _under(i, allowed)
        )
        if bad:
            offenders[name] = bad
    assert offenders == {}


def test_no_import_cycles() -> None:
    assert layout_tool.cycles(layout_tool.graph()) == []


def test_doors_use_only_the_public_api_and_packages_keep_their_bounds() -> None:
    assert layout_tool.crossings(layout_tool.graph()) == []


def test_a_planted_crossing_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(SRC, copy / "memvault")
    assert layout_tool.main(["--check", "--quiet"]) == 0
    monkeypatch.setattr(layout_tool, "SRC", copy)
    assert layout_tool.main(["--check", "--quiet"]) == 0  # the copy is as clean
    root = copy / "memvault" / "cli" / "root.py"
    root.write_text(root.read_text() + "\nfrom ..store import catalog  # noqa\n")
    assert layout_tool.main(["--check", "--quiet"]) == 1
    assert ("memvault.cli.root", "memvault.store.catalog") in layout_tool.crossings(
        layout_tool.graph()
    )
    root.write_text(root.read_text().replace("from ..store import catalog", "from .. import Vault"))
    store = copy / "memvault" / "store" / "tree.py"
    store.write_text(store.read_text() + "\nfrom ..search import api  # noqa\n")
    assert ("memvault.store.tree", "memvault.search.api") in layout_tool.crossings(
        layout_tool.graph()
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert layout_tool.cycles(edges) == [["a", "b", "c"]]


def test_no_function_over_the_limit_without_a_reason() -> None:
    found = {
        f"{name}:{line} {qual}": length
        for name, path in MODULES.items()
        for qual, line, length in layout_tool.long_functions(path)
    }
    assert found == {}


def test_no_source_file_over_the_line_limit() -> None:
    long = {
        str(p.relative_to(SRC.parent)): n
        for p in SOURCES
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _modules_after(code: str) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        "import memvault",
        "import memvault.cli",
        # running --help walks every command's signature: still nothing heavy
        "import contextlib, io\nfrom memvault.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])",
    ],
    ids=["import memvault", "import memvault.cli", "memvault --help"],
)
def test_startup_imports_nothing_heavy(code: str) -> None:
    loaded = _modules_after(code)
    heavy = sorted({m.split(".")[0] for m in loaded if m.split(".")[0] in HEAVY})
    assert heavy == [], f"{code!r} imports {heavy}"


def test_public_api_is_small() -> None:
    import memvault

    assert (
        "Vault" in memvault.__all__
        and "Memory" in memvault.__all__
        and "MemvaultError" in memvault.__all__
    )
    for name in memvault.__all__:
        assert getattr(memvault, name) is not None


def test_python_api_doc_lists_every_vault_method() -> None:
    from memvault import Vault

    doc = (SRC.parent.parent / "docs" / "python-api.md").read_text(encoding="utf-8")
    public = [n for n in vars(Vault) if not n.startswith("_")]
    assert public and [n for n in public if f"| `{n}` |" not in doc] == []
