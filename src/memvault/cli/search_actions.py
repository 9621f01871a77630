"""The search commands, ``recall``, ``fact``, ``procedure``, ``search`` and ``context``,
without typer.

Agents run these on every turn, so they take the fast way in (:mod:`memvault.cli.fast`)
like ``add``: the Typer commands in :mod:`memvault.cli.search` and the fast parser both call
these functions with every parameter of the command's table in :mod:`memvault.cli.options`.
Nothing here imports typer; rich is imported only to print hits for a person.
"""

from __future__ import annotations

import contextlib
import sys

from .. import parse_when
from ..errors import MemvaultError
from ..values import TYPE_CHECKING
from .common import console, emit_json, hook_payload, open_vault, split_list, state

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any

    from .. import SearchOptions, SearchResult, Vault

_RENAMED = {"tag": "tags", "by_agent": "agent", "turn_role": "role"}
_TIMES = {"since": "since", "until": "until", "as_of": "as-of"}


def given(**values: Any) -> SearchOptions:
    """The search keywords from a command's option values (by their parameter names: ``tag``
    becomes ``tags``, times are parsed, ...). Options left at their "not given" value (None,
    an empty list or string, False) are left out, so that the search functions apply their
    own defaults (``recall --kind`` filters by kind only when no ``type`` is passed)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name == "tag":
            value = split_list(value)
        elif name in _TIMES:
            value = parse_when(value, _TIMES[name])
        # ``0 in (False,)`` holds in Python: a number is compared by identity, so that
        # ``--limit 0`` reaches the check (an error) instead of meaning "not given".
        if value is None or value is False or (isinstance(value, list | str) and not value):
            continue
        out[_RENAMED.get(name, name)] = value
    return out  # type: ignore[return-value]  # SearchOptions' keys, fewer of them


@contextlib.contextmanager
def _opened() -> Iterator[Vault]:
    """The vault, with git's look at its files begun: a new process's first search waits for
    that ``git status`` (a child process, slow on a large vault), so it starts before the
    search code is imported and the model loaded, not after. One the search did not take is
    dropped at the end, so that no later command in this process reads it."""
    vault = open_vault()
    from .. import drop_early, start_early

    if not state.resident:  # a resident process's index is open: no first search to prepare
        start_early(vault.root)
    try:
        yield vault
    finally:
        drop_early(vault.root)


def _after_title(snippet: str, title: str) -> str:
    """The snippet without the title it starts with (a title is often the text's first
    line): the heading line above already shows it."""
    if title and snippet.startswith(title):
        return snippet[len(title) :].lstrip(" :.;,-\u2013\u2014")
    return snippet


def _end_quickly() -> None:
    """Let the process end without the interpreter's teardown once the answer is printed:
    unloading onnxruntime and numpy is a noticeable share of a cold recall
    (docs/performance.md).
    Nothing is left to finish by then: the index's SQLite transactions are committed and
    the access log is written with a raw ``os.write``. Not when the search had to write to
    Chroma (chromadb is loaded only for that), whose shutdown is left to run in order."""
    if "chromadb" not in sys.modules:
        state.exit_now = True


def recall(query: str, *, json_out: bool, **values: Any) -> None:
    """``memvault recall QUERY``: routed by intent."""
    with _opened() as vault:
        show_result(vault.recall(query, **given(**values)), json_out, values["explain"])
    _end_quickly()


def fact(query: str, *, json_out: bool, **values: Any) -> None:
    """``memvault fact QUERY``: facts, decisions, definitions, ..."""
    with _opened() as vault:
        show_result(vault.fact(query, **given(**values)), json_out, values["explain"])
    _end_quickly()


def procedure(query: str, *, json_out: bool, **values: Any) -> None:
    """``memvault procedure QUERY``: how-to knowledge."""
    with _opened() as vault:
        show_result(vault.procedure(query, **given(**values)), json_out, values["explain"])
    _end_quickly()


def search(
    query: str, *, json_out: bool, kind: str | None, type: str | None, **values: Any
) -> None:
    """``memvault search QUERY``: plain hybrid search, no routing (``--kind`` is ``--type``)."""
    with _opened() as vault:
        result = vault.search(query, **given(type=type or kind, **values))
        show_result(result, json_out, values["explain"])
    _end_quickly()


def context(query: str | None, *, budget: int, json_out: bool, hook: bool, **values: Any) -> None:
    """``memvault context QUERY``: a prompt block of relevant memory within the budget;
    ``--hook``: the same for an agent hook's JSON on stdin."""
    if hook:
        _hook_context(budget, **values)
        return
    if not query or not query.strip():
        raise MemvaultError("empty query: describe the task (or --hook)", key="QUERY")
    with _opened() as vault:
        block = vault.context(query, budget=budget, **given(**values))
    if json_out:
        emit_json(block.as_dict())
    else:
        sys.stdout.write(block.text)
    _end_quickly()


def _hook_context(budget: int, **values: Any) -> None:
    """Answer a client's hook: its JSON on stdin, ours on stdout. A failure never blocks the
    user's prompt: one line on stderr, exit 0, nothing injected."""
    try:
        payload = hook_payload()
        with _opened() as vault:
            answer = vault.hook_context(payload, budget=budget, **given(**values))
    except MemvaultError as exc:
        print(f"memvault: no context injected: {exc}", file=sys.stderr)
        return
    except Exception as exc:  # noqa: BLE001 - a bug must not block the prompt either
        print(f"memvault: no context injected: internal error ({exc!r})", file=sys.stderr)
        return
    if answer is not None:
        emit_json(answer)
    _end_quickly()


def validate(
    statement: str,
    *,
    as_of: str | None,
    scope: str | None,
    tag: list[str] | None,
    explain: bool,
    judge: bool,
    json_out: bool,
) -> None:
    """``memvault validate STATEMENT``: supported, contradicted or unknown, and why."""
    with _opened() as vault:
        result = vault.validate(
            statement,
            explain=explain,
            as_of=parse_when(as_of or None, "as-of"),
            scope=scope or None,
            tags=split_list(tag),
            judge=judge,
        )
        if result.note:
            print(f"note: {result.note}", file=sys.stderr)
        if json_out:
            emit_json(result.as_dict())
        else:
            out = console()
            out.print(f"{result.verdict}: {result.why}", markup=False)
            for ev in result.evidence:
                out.print(f"  {ev.relation:11s} [{ev.hit.id}] {ev.hit.snippet}", markup=False)
                out.print(f"              {ev.why}", markup=False, style="dim")
    _end_quickly()


def show_result(result: SearchResult, json_out: bool, explain: bool) -> None:
    """Print a search's hits: JSON for programs, or numbered lines for a person."""
    if json_out:
        emit_json(result.as_dict())
        return
    if result.note:
        print(f"note: {result.note}", file=sys.stderr)
    if explain:
        route = result.route
        bits = [f"route: {route.intent}"]
        if route.cue:
            bits.append(f"cue {route.cue!r}")
        if route.kind:
            bits.append(f"prefers {route.kind}")
        bits.append(f"{route.order} order")
        print(", ".join(bits) + f"; {result.ms:.0f} ms", file=sys.stderr)
    if not result.hits:
        hint = " (--min-score lowers it)" if result.below_floor else ""
        print(f"{result.reason}{hint}", file=sys.stderr)
        return
    out = console()
    for n, hit in enumerate(result.hits, 1):
        date = f"  {hit.created[:10]}" if hit.created and hit.type == "episodic" else ""
        status = f"  [{hit.status}]" if hit.status not in ("active",) else ""
        out.print(
            f"{n:>2}. {hit.score:6.3f}  {hit.type}/{hit.category}  {hit.address}{date}{status}",
            markup=False,
        )
        heading = f"{hit.turn.speaker} ({hit.title})" if hit.turn is not None else hit.title
        out.print(f"      {heading}", markup=False)
        shown = _after_title(hit.snippet, hit.title) if hit.turn is None else hit.snippet
        if shown:
            out.print(f"      {shown}", markup=False, style="dim")
        if explain and hit.explain:
            out.print("      " + _explain_line(hit.explain), markup=False, style="cyan")


def _explain_line(ex: Any) -> str:
    kw, vec = ex.get("keyword", {}), ex.get("vector", {})
    parts = [
        f"keyword #{kw.get('rank')} (bm25 {kw.get('bm25')} -> {kw.get('normalised')})"
        if kw.get("rank") or kw.get("bm25")
        else "keyword: no match",
        f"vector #{vec.get('rank')} (cos {vec.get('cosine')})"
        if vec.get("rank")
        else f"vector: cos {vec.get('cosine')}",
        f"fusion {ex.get('fusion')}",
    ]
    boosts = ex.get("boosts") or {}
    if boosts:
        parts.append("boosts " + " ".join(f"{k} x{v}" for k, v in boosts.items()))
    parts.append(f"= {ex.get('score')}")
    return " · ".join(parts)
