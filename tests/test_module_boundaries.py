"""A package's private (underscore) modules and names are its own: no other package
imports them.

What several packages share lives in a public module (``gpuadvisor.nvidia.values``,
``gpuadvisor.host.schema``, ...). Tests may reach into the package they test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpuadvisor

ROOT = Path(gpuadvisor.__file__).parent


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Each imported module or name, dotted in full (``a.b._c``, ``a.b._c.name``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def _private_owner(dotted: str) -> str | None:
    """The package that owns the first private part of ``dotted``, if it has one."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_no_module_imports_another_packages_private_module() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        package = ".".join(parts[:-1])
        for line, dotted in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            owner = _private_owner(dotted)
            if owner is None or not owner.startswith("gpuadvisor"):
                continue
            if package != owner and not package.startswith(owner + "."):
                wrong.append(f"{path.relative_to(ROOT.parent)}:{line}: {dotted}")
    assert wrong == []
