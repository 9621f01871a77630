"""Small value classes without ``dataclasses``.

Importing ``dataclasses`` (it pulls in ``inspect``) and building each class costs as much
at start-up as the rest of a ``memvault add`` (``docs/performance.md``). The modules on
the write path declare their value types as :class:`Record` subclasses
instead: ``__slots__`` name the fields, ``_defaults``/``_factories`` give defaults,
``_frozen`` makes instances immutable and hashable (``_unhashed`` fields left out of
the hash). Equality, ``repr`` and ``as_dict`` come from the fields.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (fast CLI start)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any


class Record:
    __slots__: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}
    _factories: dict[str, Callable[[], Any]] = {}
    _frozen = False
    _unhashed: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls._frozen:
            cls.__setattr__ = Record._refuse  # type: ignore[method-assign,assignment]
            cls.__delattr__ = Record._refuse  # type: ignore[method-assign,assignment]
            cls.__hash__ = Record._hash  # type: ignore[method-assign,assignment]
        else:
            # mutable: unhashable, like a dataclass
            cls.__hash__ = None  # type: ignore[assignment,method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(
                f"{type(self).__name__}() takes {len(names)} arguments, got {len(args)}"
            )
        put = object.__setattr__
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__}() got {name!r} twice")
            put(self, name, value)
        for name in names[len(args) :]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in self._defaults:
                value = self._defaults[name]
            elif name in self._factories:
                value = self._factories[name]()
            else:
                raise TypeError(f"{type(self).__name__}() is missing {name!r}")
            put(self, name, value)
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}() got unexpected {', '.join(map(repr, kwargs))}"
            )

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def _hash(self) -> int:
        return hash(tuple(getattr(self, n) for n in self.__slots__ if n not in self._unhashed))

    def _refuse(self, name: str, *value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is immutable")

    def __getstate__(self) -> tuple[Any, ...]:  # pickle and copy: frozen ones too
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class LazyPattern:
    """A regular expression compiled on first use.

    A module holding a dozen patterns compiled at import time makes every command pay
    for patterns most commands never use.
    """

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: Any = None

    def _get(self) -> Any:
        if self._compiled is None:
            import re

            self._compiled = re.compile(*self._args)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._args[0]

    def match(self, *args: Any) -> Any:
        return self._get().match(*args)

    def fullmatch(self, *args: Any) -> Any:
        return self._get().fullmatch(*args)

    def search(self, *args: Any) -> Any:
        return self._get().search(*args)

    def finditer(self, *args: Any) -> Any:
        return self._get().finditer(*args)

    def findall(self, *args: Any) -> Any:
        return self._get().findall(*args)

    def sub(self, *args: Any) -> Any:
        return self._get().sub(*args)

    def split(self, *args: Any) -> Any:
        return self._get().split(*args)
