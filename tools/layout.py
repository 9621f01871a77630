"""Print memvault's import graph and check the shape of the code.

    python tools/layout.py            # the graph, cycles, long modules and functions
    python tools/layout.py --check    # exit 1 on a cycle, a crossed boundary, a size over a limit

Imports are read from the source (``ast``), at any depth: an import inside a function is
still a dependency, so it counts towards a cycle. A function may pass the length limit only
when the line before its ``def`` (or its decorators) holds a comment saying ``long:`` and why.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "memvault"
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80

# The doors: each may import from the core only its public API (the ``memvault`` package:
# the Vault, its value types, the shared vocabulary), the errors, the debug trace and how
# value types are declared (``values``); and
# any door (the CLI starts the MCP server, the inspector, the watcher, the git hooks).
ADAPTERS = (
    "memvault.cli",
    "memvault.mcp_server",
    "memvault.ui",
    "memvault.githooks",
    "memvault.watch",
    "memvault.hooks",
    "memvault.integrations",
    "memvault.resident",
)
ADAPTER_MAY_IMPORT = ("memvault", "memvault.errors", "memvault.debug", "memvault.values")
# Packages with a boundary: what each may import from outside itself (prefixes).
PACKAGE_MAY_IMPORT = {
    # files, git, journal, lock, catalog: the base, the memory model, and the embedder's
    # name (a vault created for other languages is stamped with its embedder)
    "memvault.store": (
        "memvault.config",
        "memvault.errors",
        "memvault.paths",
        "memvault.values",
        "memvault.threads",
        "memvault.memory",
        "memvault.scopes",
        "memvault.embeddings",
    ),
    # validate reads statements over what search finds: never the vault or the services
    "memvault.validate": (
        "memvault.config",
        "memvault.errors",
        "memvault.paths",
        "memvault.values",
        "memvault.trust",  # which commands from the shared config may run here
        "memvault.debug",
        "memvault.memory",
        "memvault.language",
        "memvault.search",
        "memvault.index",
        "memvault.store",
        "memvault.embeddings",  # the embedder interface: words aligned by meaning
    ),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``path`` imports, each resolved to the most specific module."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def add(target: str, names: list[str]) -> None:
        for alias in names:
            if f"{target}.{alias}" in known:
                found.add(f"{target}.{alias}")
            elif target in known:
                found.add(target)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            add(target, [a.name for a in node.names])
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    mods = sources()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def long_functions(path: Path) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function over the limit without a reason."""
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines), str(path))

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    length = (child.end_lineno or child.lineno) - child.lineno + 1
                    above = lines[start - 2].strip() if start >= 2 else ""
                    if length > MAX_FUNCTION_LINES and not above.startswith("# long:"):
                        yield qual, child.lineno, length
                yield from walk(child, qual + ".")

    yield from walk(tree, "")


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def crossings(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, import) pairs that cross a boundary: a door reaching past the public API, or
    a package importing outside what it may."""
    found: list[tuple[str, str]] = []
    for name, targets in sorted(edges.items()):
        for target in sorted(targets):
            if _under(name, ADAPTERS):
                if not _under(target, ADAPTERS) and target not in ADAPTER_MAY_IMPORT:
                    found.append((name, target))
                continue
            for package, allowed in PACKAGE_MAY_IMPORT.items():
                if _under(name, (package,)) and not _under(target, (package, *allowed)):
                    found.append((name, target))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="exit 1 on any finding")
    parser.add_argument("--quiet", action="store_true", help="print findings only, not the graph")
    args = parser.parse_args(argv)
    edges = graph()
    mods = sources()
    if not args.quiet:
        for name in sorted(edges):
            inner = sorted(edges[name])
            print(f"{name} -> {', '.join(inner) if inner else '(nothing of memvault)'}")
        print()
    found = cycles(edges)
    print(f"import cycles: {len(found)}")
    for component in found:
        print("  cycle: " + " <-> ".join(component))
    big = {
        n: c
        for n, p in mods.items()
        if (c := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    print(f"modules over {MAX_MODULE_LINES} lines: {len(big)}")
    for name, count in sorted(big.items()):
        print(f"  {name}: {count}")
    crossed = crossings(edges)
    print(f"imports across a boundary: {len(crossed)}")
    for name, target in crossed:
        print(f"  {name} -> {target}")
    longs = [(n, *f) for n, p in mods.items() for f in long_functions(p)]
    print(f"functions over {MAX_FUNCTION_LINES} lines without a '# long:' reason: {len(longs)}")
    for module, qual, line, length in longs:
        print(f"  {module}:{line} {qual}: {length}")
    return 1 if args.check and (found or big or crossed or longs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
