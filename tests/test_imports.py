"""The import graph: no circle among the gateway's modules, the package never imports its test
harness, and the scripts depend on the package only (never on the test suite)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gateway"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(path: Path) -> set[str]:
    """Every module name an import in ``path`` names (TYPE_CHECKING ones too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for target in _imported(path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            # A package's own __init__ imported from inside it is not an edge (as in Python).
            if target and target != name and not name.startswith(target + "."):
                edges.add(target)
        graph[name] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return circles


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_of_the_gateway_imports_itself_round_a_circle() -> None:
    graph = _graph()
    assert len(graph) > 90  # the walk reached the subpackages
    assert _circles(graph) == []


def test_only_the_test_harness_imports_the_test_harness() -> None:
    graph = _graph()
    users = sorted(
        name
        for name, edges in graph.items()
        if not name.startswith("gateway.testing")
        and any(e.startswith("gateway.testing") for e in edges)
    )
    assert users == []


def test_scripts_import_the_package_never_the_tests() -> None:
    scripts = sorted((ROOT / "scripts").glob("*.py"))
    assert scripts
    for script in scripts:
        tests = sorted(n for n in _imported(script) if n == "tests" or n.startswith("tests."))
        assert tests == [], f"{script.name} imports {tests}: use gateway.testing"


def test_the_persons_proxy_never_imports_the_web_server() -> None:
    """The proxy emits its own typed events (gateway/proxy/events.py); only gateway/server/
    knows the page's wire format, so no arrow runs from the proxy up to it."""
    graph = _graph()
    proxy = {n: e for n, e in graph.items() if n.startswith("gateway.proxy")}
    assert "gateway.proxy.session" in proxy and "gateway.proxy.listening" in proxy
    upward = sorted(
        (name, e) for name, edges in proxy.items() for e in edges if e.startswith("gateway.server")
    )
    assert upward == []


def test_tests_never_load_scripts_by_path() -> None:
    """Tests import what scripts do from the package (gateway.testing and the rest), or run it
    as ``python -m gateway.…``; never a file under scripts/ by its path."""
    by_path = re.compile(r"spec_from_file_location|run_path\(|\"scripts\"\s*/\s*\"\w+\.py\"")
    found = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("*.py")
        if path != Path(__file__).resolve() and by_path.search(path.read_text(encoding="utf-8"))
    )
    assert found == []


def test_the_command_lines_parser_loads_no_model() -> None:
    """Every command's options are declared without loading the session or a model: ``validate``
    and ``--help`` stay quick (gateway/proxy/__init__.py imports nothing for this reason)."""
    import subprocess
    import sys

    code = (
        "import sys; from gateway.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('faster_whisper', 'ctranslate2', 'gateway.proxy.session', "
        "'gateway.voice.stt') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout
