"""memvault.values.Record: value types declared like dataclasses, without dataclasses."""

from __future__ import annotations

import ast
import copy
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest

from memvault import values
from memvault.values import Record, field

SRC = Path(__file__).resolve().parent.parent / "src"


class Point(Record, frozen=True):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str | None = field(default=None, compare=False, repr=False)


class Bag(Record):
    name: str
    items: list[int] = field(default_factory=list)
    LIMIT: ClassVar[int] = 10  # a class constant, not a field


class Doc(Record, frozen=True):
    id: str
    meta: dict[str, str] = field(hash=False)  # in equality, not in the hash


class Point3(Point, frozen=True):
    z: int = 0


@pytest.fixture(params=["generic", "compiled"])
def built(request: pytest.FixtureRequest) -> str:
    """Run a test against the generic methods and again once they are compiled."""
    if request.param == "compiled":
        for cls in (Point, Bag, Doc, Point3):
            values._compile(cls)
    else:
        for cls in (Point, Bag, Doc, Point3):
            for name in ("__init__", "__eq__"):
                setattr(cls, name, getattr(Record, name))
            if cls._frozen:
                cls.__hash__ = Record._hash  # type: ignore[method-assign,assignment]
        values._built.clear()
    return str(request.param)


def test_fields_become_slots_in_order() -> None:
    assert Point._fields == ("x", "y", "tags", "note")
    assert Point.__slots__ == ("x", "y", "tags", "note")
    assert Point3._fields == ("x", "y", "tags", "note", "z")
    assert Point3.__slots__ == ("z",)  # the base's slots are the base's
    assert Bag._fields == ("name", "items") and Bag.LIMIT == 10
    assert not hasattr(Point(1), "__dict__") and not hasattr(Bag("b"), "__dict__")
    with pytest.raises(AttributeError):
        Bag("b").other = 1  # type: ignore[attr-defined]


def test_construction_positional_keyword_defaults(built: str) -> None:
    p = Point(1, 2)
    assert (p.x, p.y, p.tags, p.note) == (1, 2, (), None)
    assert Point(y=3, x=4) == Point(4, 3)
    assert Point3(1, z=5).z == 5 and Point3(1).y == 0
    assert Bag("b", [1]).items == [1]


def test_factories_give_each_instance_its_own_value(built: str) -> None:
    a, b = Bag("a"), Bag("b")
    a.items.append(1)
    assert b.items == [] and a.items == [1]


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        ((), {}, "missing"),
        ((1, 2, (), None, 5), {}, "positional arguments"),
        ((1,), {"x": 2}, "multiple values"),
        ((1,), {"w": 2}, "unexpected keyword"),
    ],
)
def test_bad_calls_raise_type_error(
    built: str, args: tuple[object, ...], kwargs: dict[str, object], words: str
) -> None:
    with pytest.raises(TypeError, match=words):
        Point(*args, **kwargs)


def test_frozen_refuses_assignment_and_deletion(built: str) -> None:
    p = Point(1)
    with pytest.raises(AttributeError, match="immutable"):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del p.x  # type: ignore[misc]
    bag = Bag("b")
    bag.name = "c"  # not frozen: assignable
    assert bag.name == "c"


def test_equality_compares_class_and_compared_fields(built: str) -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(1, 3)
    assert Point(1, note="a") == Point(1, note="b")  # compare=False
    assert Point(1) != Point3(1)  # another class, even a subclass
    assert Point(1) != (1, 0, (), None)
    assert Doc("a", {"k": "v"}) != Doc("a", {"k": "w"})  # hash=False: still compared
    assert Bag("a") == Bag("a") and Bag("a") != Bag("a", [1])


def test_hash_of_frozen_ones_only(built: str) -> None:
    assert hash(Point(1, 2)) == hash(Point(1, 2, note="other"))
    assert len({Point(1), Point(1), Point(2)}) == 2
    assert hash(Doc("a", {"k": "v"})) == hash(Doc("a", {}))  # a dict field left out
    with pytest.raises(TypeError, match="unhashable"):
        hash(Bag("a"))


def test_repr_shows_fields_but_those_left_out(built: str) -> None:
    assert repr(Point(1, 2, note="secret")) == "Point(x=1, y=2, tags=())"
    assert repr(Bag("b", [1])) == "Bag(name='b', items=[1])"


def test_as_dict_and_replace(built: str) -> None:
    p = Point(1, 2, note="n")
    assert p.as_dict() == {"x": 1, "y": 2, "tags": (), "note": "n"}
    q = p.replace(y=5)
    assert q == Point(1, 5) and q.note == "n" and p.y == 2 and type(q) is Point
    assert Point3(1, z=2).replace(x=0) == Point3(0, z=2)
    with pytest.raises(TypeError):
        p.replace(w=1)


def test_copy_and_pickle(built: str) -> None:
    p = Point(1, 2, ("a",), "n")
    assert pickle.loads(pickle.dumps(p)) == p
    bag = Bag("b", [1])
    shallow = copy.copy(bag)
    assert shallow == bag and shallow.items is bag.items
    assert copy.deepcopy(bag).items is not bag.items


def test_compiled_after_enough_instances() -> None:
    class Many(Record, frozen=True):
        a: int
        b: list[int] = field(default_factory=list)

    for i in range(values.COMPILE_AFTER):
        Many(i)
    assert Many.__init__ is Record.__init__  # still the generic one
    Many(0)
    assert Many.__init__ is not Record.__init__
    assert Many.__eq__ is not Record.__eq__ and Many.__hash__ is not Record._hash
    assert Many(1) == Many(1, []) and Many(1).b is not Many(1).b
    with pytest.raises(TypeError, match="missing"):
        Many()  # type: ignore[call-arg]


def test_a_hash_does_not_change_when_the_methods_are_compiled() -> None:
    class One(Record, frozen=True):
        a: str

    class Two(Record, frozen=True):
        a: str
        b: int = 0

    class Zero(Record, frozen=True):
        pass

    before = [One("x"), Two("x", 1), Zero()]
    held = set(before)
    for cls in (One, Two, Zero):
        values._compile(cls)
    after = [One("x"), Two("x", 1), Zero()]
    assert [hash(v) for v in before] == [hash(v) for v in after]
    assert all(v in held for v in after)


def test_a_class_keeps_the_methods_it_writes() -> None:
    class Own(Record):
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    for _ in range(values.COMPILE_AFTER + 1):
        Own(1)
    assert Own(1) == Own(2)


def test_declaration_errors() -> None:
    with pytest.raises(TypeError, match="without a default follows"):

        class Bad(Record):
            a: int = 0
            b: int

    with pytest.raises(TypeError, match="frozen"):

        class Thawed(Point, frozen=False):
            pass

    with pytest.raises(ValueError, match="not both"):
        field(default=1, default_factory=list)


def test_no_dataclass_declarations_left_in_the_package() -> None:
    found = []
    for path in sorted((SRC / "memvault").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if ast.unparse(target).endswith("dataclass"):
                        found.append(f"{path.name}:{node.name}")
    assert found == []


def test_mypy_checks_the_constructors(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    # values.py on its own: through memvault/__init__ mypy would follow the whole package
    # and its heavy dependencies (minutes)
    (tmp_path / "values.py").write_text((SRC / "memvault" / "values.py").read_text())
    sample = tmp_path / "sample.py"
    sample.write_text(
        textwrap.dedent(
            """
            from values import Record, field

            class Hit(Record, frozen=True):
                id: str
                score: float = 0.0
                tags: list[str] = field(default_factory=list)

            Hit("a", 1.0, ["t"])
            Hit(id="a", tags=[])
            Hit("a").replace(score=2.0)
            Hit()  # line 12
            Hit(1)  # line 13
            Hit("a", nope=1)  # line 14
            Hit("a").score = 2.0  # line 15
            """
        )
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(sample),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert [int(line.split(":")[1]) for line in errors] == [12, 13, 14, 15], proc.stdout
