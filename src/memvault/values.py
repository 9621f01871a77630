"""Value types, declared like dataclasses but without importing ``dataclasses``.

Importing ``dataclasses`` (it pulls in ``inspect``) and building each class with it costs
as much at start-up as the rest of a ``memvault add`` (``docs/performance.md``), and most
modules sit on some command's start-up path. So every value type subclasses
:class:`Record`::

    class Hit(Record, frozen=True):
        id: str
        score: float = 0.0
        tags: list[str] = field(default_factory=list)
        memory: Memory | None = field(default=None, compare=False, repr=False)

The annotated names of the class body, in order (a base class's first), are the fields;
they become ``__slots__``. Instances compare equal by their fields, print them, give
them back with :meth:`Record.as_dict` and copy themselves with :meth:`Record.replace`;
``frozen=True`` makes them immutable and hashable. mypy checks the constructors as it
does a dataclass's (``dataclass_transform``).

This module also holds ``TYPE_CHECKING``, the flag each module guards its typing-only
imports with: ``typing`` is not imported at run time. It imports nothing from memvault.
"""

from __future__ import annotations

from operator import attrgetter  # loaded at start-up already (collections uses it)

# mypy takes any name TYPE_CHECKING as true; at run time it is False and typing stays
# unimported (~10 ms at start-up: `python -X importtime -c "import typing"`).
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any, ClassVar, Self, dataclass_transform
else:

    def dataclass_transform(**_: object) -> object:
        return lambda cls: cls


_MISSING: Any = object()  # no default given

# A class's __init__ reads its fields in a generic loop until it has built this many
# instances; then __init__, __eq__ and __hash__ are compiled for the class (as dataclasses
# do for every class, at import): compiling costs ~30 generic calls (~60-80 us) and most
# classes are built a few times per command, while a scan or a ranking builds thousands
# of a few (compiled, __init__ is ~2-4x faster, __eq__ and __hash__ ~1.5-2x).
COMPILE_AFTER = 32


class Field:
    """What :func:`field` says of one field."""

    __slots__ = ("default", "default_factory", "compare", "hash", "repr")

    def __init__(
        self,
        default: Any = _MISSING,
        default_factory: Any = _MISSING,
        compare: bool = True,
        hash: bool | None = None,
        repr: bool = True,
    ) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("a field takes a default or a default_factory, not both")
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.hash = compare if hash is None else hash
        self.repr = repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] = _MISSING,
    compare: bool = True,
    hash: bool | None = None,
    repr: bool = True,
) -> Any:
    """A field with a default factory, or left out of equality (``compare``), the hash
    (``hash``, default: as ``compare``) or ``repr``; as ``dataclasses.field``."""
    return Field(default, default_factory, compare, hash, repr)


def _key(names: tuple[str, ...]) -> Callable[[Any], Any]:
    """The values of ``names`` of an instance, as a tuple, for equality and the hash (the
    same tuple the compiled methods build: a hash must not change when they replace these)."""
    if len(names) > 1:
        return attrgetter(*names)
    get = attrgetter(*names) if names else None
    # staticmethod: read through the instance, not a method
    return staticmethod(lambda self: (get(self),) if get else ())


class _RecordType(type):
    """Builds a :class:`Record` class: fields, ``__slots__`` and the methods that depend on
    frozenness, when the class is created (``__slots__`` can't be added afterwards)."""

    _specs: dict[str, Field]
    _frozen: bool

    def __new__(
        mcs,
        name: str,
        bases: tuple[type, ...],
        ns: dict[str, Any],
        *,
        frozen: bool | None = None,
        **kwargs: Any,
    ) -> _RecordType:
        specs: dict[str, Field] = {}
        inherited = False
        for base in reversed(bases):
            if isinstance(base, _RecordType) and base._specs:
                specs.update(base._specs)
                inherited = inherited or base._frozen
        if frozen is None:
            frozen = inherited
        elif specs and frozen != inherited:
            raise TypeError(f"{name}: frozen={frozen} differs from its base class's")
        own: list[str] = list(ns.get("__slots__", ()))
        for fname, annotation in ns.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue  # not a field, as in a dataclass
            value = ns.pop(fname, _MISSING)
            if fname not in specs:
                own.append(fname)
            specs[fname] = value if isinstance(value, Field) else Field(default=value)
        _check_order(name, specs)
        ns["__slots__"] = tuple(own)
        if specs or "_specs" not in ns:  # Record itself declares them
            names = tuple(specs)
            ns["_specs"] = specs
            ns["_fields"] = ns["__match_args__"] = names
            ns["_frozen"] = frozen
            ns["_shown"] = tuple(n for n in names if specs[n].repr)
            ns["_compared"] = _key(tuple(n for n in names if specs[n].compare))
            ns["_hashed"] = _key(tuple(n for n in names if specs[n].hash))
            # each class its own, never a base's compiled one (see _compile)
            ns.setdefault("__init__", Record.__init__)
            ns.setdefault("__eq__", Record.__eq__)
            if frozen:
                ns.setdefault("__setattr__", Record._refuse)
                ns.setdefault("__delattr__", Record._refuse)
                ns.setdefault("__hash__", Record._hash)
            else:
                ns.setdefault("__hash__", None)  # mutable: unhashable, like a dataclass
        return super().__new__(mcs, name, bases, ns, **kwargs)


def _check_order(name: str, specs: dict[str, Field]) -> None:
    defaulted = ""
    for fname, spec in specs.items():
        if spec.default is not _MISSING or spec.default_factory is not _MISSING:
            defaulted = fname
        elif defaulted:
            raise TypeError(f"{name}: field {fname!r} without a default follows {defaulted!r}")


_built: dict[type, int] = {}  # instances built by the generic __init__, per class


@dataclass_transform(field_specifiers=(field, Field))
class Record(metaclass=_RecordType):
    """Base of memvault's value types; see the module's docstring."""

    __slots__ = ()
    _specs: ClassVar[dict[str, Field]] = {}
    _fields: ClassVar[tuple[str, ...]] = ()  # the field names, in order
    _frozen: ClassVar[bool] = False
    _shown: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[Callable[[Any], object]]  # the values equality compares
    _hashed: ClassVar[Callable[[Any], object]]  # those the hash is made of

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        built = _built.get(cls, 0) + 1
        if built > COMPILE_AFTER:
            _compile(cls)
            cls.__init__(self, *args, **kwargs)
            return
        _built[cls] = built
        names = cls._fields
        if len(args) > len(names):
            raise TypeError(
                f"{cls.__qualname__}.__init__() takes {len(names) + 1} positional arguments "
                f"but {len(args) + 1} were given"
            )
        put = object.__setattr__
        for name, value in zip(names, args, strict=False):
            put(self, name, value)
        specs = cls._specs
        for name in names[len(args) :]:
            if name in kwargs:
                value = kwargs.pop(name)
            else:
                spec = specs[name]
                if spec.default is not _MISSING:
                    value = spec.default
                elif spec.default_factory is not _MISSING:
                    value = spec.default_factory()
                else:
                    raise TypeError(
                        f"{cls.__qualname__}.__init__() missing required argument: {name!r}"
                    )
            put(self, name, value)
        for name in kwargs:
            why = "multiple values for" if name in names else "an unexpected keyword"
            raise TypeError(f"{cls.__qualname__}.__init__() got {why} argument {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = type(self)._compared
        return key(self) == key(other)

    def _hash(self) -> int:
        return hash(type(self)._hashed(self))

    def _refuse(self, name: str, *value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is immutable")

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{type(self).__qualname__}({inner})"

    def __getstate__(self) -> tuple[Any, ...]:  # pickle and copy: frozen ones too
        return tuple(getattr(self, name) for name in self._fields)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._fields, state, strict=True):
            object.__setattr__(self, name, value)

    def as_dict(self) -> dict[str, Any]:
        """The fields by name (not recursive: a field holding a Record holds it here too)."""
        return {name: getattr(self, name) for name in self._fields}

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (field names) applied, as ``dataclasses.replace``."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)


def _compile(cls: type[Record]) -> None:
    """Give ``cls`` the ``__init__``, ``__eq__`` and ``__hash__`` a dataclass would have:
    one statement per field, no loop (those the class body wrote itself stay)."""
    specs = cls._specs
    params, lines = [], []
    env: dict[str, Any] = {"_MISSING": _MISSING, "_put": object.__setattr__}
    for name, spec in specs.items():
        value = name
        if spec.default is not _MISSING:
            env[f"_d_{name}"] = spec.default
            params.append(f"{name}=_d_{name}")
        elif spec.default_factory is not _MISSING:
            env[f"_f_{name}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            value = f"_f_{name}() if {name} is _MISSING else {name}"
        else:
            params.append(name)
        put = f"_put(__self, {name!r}, {value})" if cls._frozen else f"__self.{name} = {value}"
        lines.append(f"    {put}\n")

    def values(of: str, names: list[str]) -> str:
        return "(" + "".join(f"{of}.{n}, " for n in names) + ")"

    compared = [n for n, spec in specs.items() if spec.compare]
    hashed = [n for n, spec in specs.items() if spec.hash]
    body = "".join(lines) or "    pass\n"
    source = (
        f"def __init__(__self, {', '.join(params)}):\n{body}"
        "def __eq__(__self, __other):\n"
        "    if __other.__class__ is not __self.__class__:\n"
        "        return NotImplemented\n"
        f"    return {values('__self', compared)} == {values('__other', compared)}\n"
        f"def __hash__(__self):\n    return hash({values('__self', hashed)})\n"
    )
    exec(source, env)
    generic = {"__init__": Record.__init__, "__eq__": Record.__eq__, "__hash__": Record._hash}
    for name, was in generic.items():
        if cls.__dict__.get(name) is was:
            fn = env[name]
            fn.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, fn)


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
