"""Issue 30 item 6: every queue and cache in gateway/ is bounded, and docs/bounds.md says how.

The test walks gateway/ with the AST and finds every construction of an ``asyncio`` queue, a
``deque``, an ``OrderedDict``, a ``@cache``/``@lru_cache`` function, and every empty ``dict``,
``set`` or ``list`` kept on an object (``self.x = {}``; a dataclass field of such a default):
the places where something can pile up. Each must have a row in docs/bounds.md (keyed
``path::Owner.name``) giving its bound and what happens at the bound, and the rows must all still
exist. Where the code can carry the bound itself it must: a queue has a ``maxsize`` and an
``lru_cache`` a ``maxsize``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INVENTORY = ROOT / "docs" / "bounds.md"
#: The test harness shipped in the package (clients and agents that record what one test or
#: benchmark run saw): it serves nobody, so it is not walked.
HARNESS = ROOT / "gateway" / "testing"
QUEUES = {"Queue", "PriorityQueue", "LifoQueue"}
CONTAINERS = QUEUES | {"deque", "OrderedDict", "defaultdict"}
EMPTY = {"dict", "set", "list"}


def _called(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)


def _kind(value: ast.AST) -> tuple[str, ast.Call | None] | None:
    """What ``value`` constructs, if it is a container this test inventories."""
    name = _called(value)
    if name in CONTAINERS:
        return name, value  # type: ignore[return-value]
    if name in EMPTY and not value.args:  # type: ignore[attr-defined]
        return name, None
    if name == "field":  # a dataclass field's default_factory
        for kw in value.keywords:  # type: ignore[attr-defined]
            if kw.arg == "default_factory":
                made = kw.value.body if isinstance(kw.value, ast.Lambda) else kw.value
                if isinstance(made, ast.Name) and made.id in EMPTY:
                    return made.id, None
                return _kind(made)
    if isinstance(value, ast.Dict) and not value.keys:
        return "dict", None
    if isinstance(value, ast.List) and not value.elts:
        return "list", None
    if isinstance(value, ast.Set) and not value.elts:
        return "set", None
    return None


class _Walker(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.scope: list[tuple[str, str]] = []  # (kind, name)
        self.found: dict[str, tuple[str, ast.Call | None, int]] = {}

    def _owner(self) -> str:
        classes = [n for k, n in self.scope if k == "class"]
        return classes[-1] if classes else ""

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(("class", node.name))
        self.generic_visit(node)
        self.scope.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in ("cache", "lru_cache"):
                call = d if isinstance(d, ast.Call) else None
                self._add(node.name, name, call, node.lineno, owner=self._owner())
        self.scope.append(("def", node.name))
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _add(self, name: str, kind: str, call: ast.Call | None, line: int, *, owner: str) -> None:
        key = f"{self.path}::{owner + '.' if owner else ''}{name}"
        self.found.setdefault(key, (kind, call, line))

    def _assign(
        self, target: ast.AST, value: ast.AST | None, line: int, annotation: ast.AST | None = None
    ) -> None:
        made = _kind(value) if value is not None else None
        on_self = isinstance(target, ast.Attribute) and getattr(target.value, "id", "") == "self"
        if made is None and on_self and annotation is not None:
            # self.x: set[str] = {first}: a container started with something in it
            base = annotation.value if isinstance(annotation, ast.Subscript) else annotation
            name = getattr(base, "id", getattr(base, "attr", ""))
            if name in EMPTY | CONTAINERS and value is not None:
                made = (name, None)
        if made is None:
            return
        kind, call = made
        in_def = any(k == "def" for k, _ in self.scope)
        if on_self:
            self._add(target.attr, kind, call, line, owner=self._owner())  # type: ignore[attr-defined]
        elif isinstance(target, ast.Name) and not self.scope:
            self._add(target.id, kind, call, line, owner="")  # module-level: lives forever
        elif isinstance(target, ast.Name) and not in_def and self._owner():
            self._add(target.id, kind, call, line, owner=self._owner())  # a class-level field
        elif isinstance(target, ast.Name) and kind in CONTAINERS:
            functions = [n for k, n in self.scope if k == "def"]
            self._add(target.id, kind, call, line, owner=".".join(functions))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assign(target, node.value, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assign(node.target, node.value, node.lineno, node.annotation)
        self.generic_visit(node)


def sites() -> dict[str, tuple[str, ast.Call | None, int]]:
    """Every inventoried construction in gateway/, by key."""
    found: dict[str, tuple[str, ast.Call | None, int]] = {}
    for path in sorted((ROOT / "gateway").rglob("*.py")):
        if HARNESS in path.parents:
            continue
        walker = _Walker(path.relative_to(ROOT).as_posix())
        walker.visit(ast.parse(path.read_text(), str(path)))
        found.update(walker.found)
    return found


def inventory() -> dict[str, tuple[str, str]]:
    """docs/bounds.md's rows: key → (bound, at the bound)."""
    rows = {}
    for line in INVENTORY.read_text().splitlines():
        m = re.match(r"^\|\s*`([^`]+::[^`]+)`\s*\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$", line)
        if m:
            rows[m.group(1)] = (m.group(3).strip(), m.group(4).strip())
    return rows


def _has_arg(call: ast.Call | None, position: int, keyword: str) -> bool:
    if call is None:
        return False
    given = [k.value for k in call.keywords if k.arg == keyword]
    if len(call.args) > position:
        given.append(call.args[position])
    return any(not (isinstance(v, ast.Constant) and v.value in (0, None)) for v in given)


def test_every_queue_and_cache_is_in_the_inventory_with_its_bound() -> None:
    found, rows = sites(), inventory()
    missing = sorted(set(found) - set(rows))
    assert not missing, f"add these to docs/bounds.md (bound, what happens at it): {missing}"
    stale = sorted(set(rows) - set(found))
    assert not stale, f"docs/bounds.md lists what gateway/ no longer has: {stale}"
    vague = [
        k
        for k, (bound, at) in rows.items()
        if not bound or not at or "unbounded" in bound or "a gap" in bound.lower()
    ]
    assert not vague, f"give these a bound and what happens at it: {vague}"


def test_queues_and_lru_caches_carry_their_bound_in_the_code() -> None:
    unbounded = [
        f"{key} (line {line})"
        for key, (kind, call, line) in sites().items()
        if (kind in QUEUES and not _has_arg(call, 0, "maxsize"))
        or (kind == "lru_cache" and not _has_arg(call, 0, "maxsize"))
    ]
    assert not unbounded, f"unbounded in the code: {unbounded}"


def test_the_walk_finds_what_it_looks_for() -> None:
    """The walker itself: an unbounded queue, a deque and a cache dict are found; a queue with
    its bound passes the code check, one without does not."""
    source = (
        "import asyncio\nfrom collections import deque\nfrom functools import cache\n"
        "class A:\n    def __init__(self):\n        self.q = asyncio.Queue()\n"
        "        self.b = asyncio.Queue(maxsize=4)\n        self.d = deque(maxlen=3)\n"
        "        self.cache = {}\n"
        "@cache\ndef f(x):\n    return x\n"
    )
    walker = _Walker("m.py")
    walker.visit(ast.parse(source))
    assert set(walker.found) == {"m.py::A.q", "m.py::A.b", "m.py::A.d", "m.py::A.cache", "m.py::f"}
    assert not _has_arg(walker.found["m.py::A.q"][1], 0, "maxsize")
    assert _has_arg(walker.found["m.py::A.b"][1], 0, "maxsize")
