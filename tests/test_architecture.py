"""The layers docs/design.md draws, held by the code's own imports.

Every ``import`` of a gpuadvisor module, at module level or inside a function, is an
edge. The graph must have no circle, and each package may import only the layers below
it: inputs -> facts -> rules -> decision -> report, with the estimator (sizing, arithmetic
on the inputs) below the engine, and the edge (cli, pipeline,
launch) free to use everything. (Private modules: ``tests/test_module_boundaries.py``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "gpuadvisor"

#: Shared by every layer; they import nothing above themselves.
BASE = {
    "gpuadvisor",
    "gpuadvisor.vocabulary",
    "gpuadvisor.errors",
    "gpuadvisor.resources",
    "gpuadvisor.clock",
}

#: Layer -> the layers it may import (besides itself and BASE).
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "inputs": set(),
    "host": set(),
    "nvidia": {"host"},
    "evidence": {"inputs", "host", "nvidia"},
    "probe": {"inputs", "host", "nvidia"},
    "ask": {"inputs", "sizing"},
    "sizing": {"inputs"},
    "engine": {"inputs", "host", "nvidia", "sizing"},
    "decision": {"inputs", "host", "engine", "sizing"},
    "render": {"inputs", "decision"},
    # The fleet reads evidence-like data from Prometheus and calls the decision path,
    # as pipeline.py does: an orchestrator under the command line (FLEET_EDGE below).
    "fleet": {"inputs", "host", "nvidia", "evidence", "engine", "decision", "render", "sizing"},
    "edge": {
        "fleet",
        "inputs",
        "host",
        "nvidia",
        "evidence",
        "probe",
        "ask",
        "engine",
        "decision",
        "render",
        "sizing",
    },
}
EDGE = {"cli", "pipeline", "launch", "__main__", "web"}
#: The edge modules the fleet may use: the one path to a decision, and the web page's
#: listening socket and request guard (for ``fleet --serve``). Never the command line.
FLEET_EDGE = {"gpuadvisor.pipeline", "gpuadvisor.web.server", "gpuadvisor.web.guard"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    if module in BASE:
        return "base"
    top = module.split(".")[1]
    return "edge" if top in EDGE else top


def imports_of(path: Path) -> set[str]:
    """gpuadvisor modules this file imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("gpuadvisor")}
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith("gpuadvisor")
        ):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports_of(path) for name, path in MODULES.items()}


def test_every_package_imports_only_the_layers_below_it() -> None:
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        mine = layer_of(module)
        for target in sorted(targets):
            theirs = layer_of(target)
            if mine == "fleet" and target in FLEET_EDGE:
                continue
            if theirs not in {"base", mine, *ALLOWED[mine]}:
                wrong.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_the_base_modules_import_nothing_above_them() -> None:
    for module in BASE - {"gpuadvisor"}:
        assert GRAPH[module] <= BASE, module


def test_no_import_circles() -> None:
    """Function-level imports count: a circle hidden inside a function is still one."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(GRAPH.get(node, ())):
            if target not in MODULES or target == node:
                continue
            if state.get(target) == 1:
                circle = [*stack[stack.index(target) :], target]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module)


def test_no_module_is_over_about_four_hundred_lines() -> None:
    """Code modules and fact tables alike stay small enough to hold in one's head
    (issue #34: under 450 lines; the bound is 440)."""
    long = {
        name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > 440
    }
    assert not long, long


def test_reports_read_only_the_decision() -> None:
    """render/ sees the decision document and the sentences made from it, nothing of the
    engine that produced it, not even indirectly through the decision package."""
    allowed = {
        "gpuadvisor.decision.model",
        "gpuadvisor.decision.model_base",
        "gpuadvisor.decision.model_pick",
        "gpuadvisor.decision.words",
    }
    seen: set[str] = set()
    todo = [m for m in MODULES if m.startswith("gpuadvisor.render")]
    while todo:
        module = todo.pop()
        for target in GRAPH.get(module, ()):
            if target.startswith("gpuadvisor.decision") and target not in allowed:
                raise AssertionError(f"{module} imports {target}")
            if target.startswith("gpuadvisor.engine"):
                raise AssertionError(f"{module} reaches the engine through {target}")
            if target in allowed and target not in seen:
                seen.add(target)
                todo.append(target)


def test_the_engine_imports_no_words() -> None:
    for module, targets in GRAPH.items():
        if module.startswith("gpuadvisor.engine"):
            assert not {
                t for t in targets if t.startswith(("gpuadvisor.decision", "gpuadvisor.render"))
            }, module


def test_the_fleet_neither_prints_nor_exits() -> None:
    """gpuadvisor.fleet is an orchestrator, not an edge: the command prints and exits."""
    fleet = {name: path for name, path in MODULES.items() if name.startswith("gpuadvisor.fleet")}
    assert "gpuadvisor.fleet.build" in fleet
    for name, path in fleet.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                assert called not in {"print", "exit", "echo"}, f"{name} calls {called}"
        assert not {t for t in GRAPH[name] if t.startswith(("gpuadvisor.cli", "typer"))}, name
