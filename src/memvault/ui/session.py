"""One running inspector: its vault (opened once, as one identity), the lock that serialises
vault work between requests, the browse snapshot, the security guard and the templates."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .security import Guard

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from .. import ContentPurge, Vault

T = TypeVar("T")
HERE = Path(__file__).resolve().parent


def ui_author(name: str, agent: str | None) -> str:
    """The git author name of the inspector's commits: the vault's, marked as the UI's, with
    the agent the inspector acts as."""
    return f"{name} (memvault ui{f', agent:{agent}' if agent else ''})"


class Session:
    """Everything a request handler needs. Vault work runs under :attr:`lock` (one request
    at a time: the index handle and the catalog are per process)."""

    def __init__(self, vault: Vault, guard: Guard) -> None:
        self.vault = vault
        self.guard = guard
        self.lock = threading.RLock()
        self.listing = vault.browse()
        self.templates = _environment()
        self.last_purge: ContentPurge | None = None  # for its result page (never the text)

    def _refresh_config(self) -> None:
        """Pick up settings changed elsewhere (``memvault pause``); the identity and the
        author of the inspector's commits stay as started."""
        self.vault.reload_config()

    @contextmanager
    def using(self) -> Iterator[Vault]:
        """The vault, for one request's work."""
        with self.lock:
            self._refresh_config()
            yield self.vault

    def run(self, fn: Callable[[Vault], T]) -> T:
        with self.using() as vault:
            return fn(vault)

    def render(self, name: str, **context: Any) -> str:
        return self.templates.get_template(name).render(
            identity=self.vault.identity, csrf=self.guard.csrf, root=self.vault.root, **context
        )


def _environment() -> jinja2.Environment:
    import jinja2

    from .render import plain

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every value is escaped unless marked safe (sanitised Markdown)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["plain"] = plain
    env.filters["day"] = lambda value: str(value or "")[:10]
    env.filters["number"] = lambda value: f"{value:,}"
    return env
