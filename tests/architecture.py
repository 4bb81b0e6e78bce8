"""The package contract of `uniview/`: which package may import which, read from the code's import graph.

`LAYERS` is the one owner of the contract (docs/development.md describes it, and a test checks that the page
names every package). Every import counts, at any depth of a function and under `TYPE_CHECKING` alike: a
type-only import still ties one module's meaning to another's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Each package of uniview/ and the packages it may import besides itself. The pure packages come first;
#: I/O lives in warehouse/, local/ and sink/; the adapters (cloudfn/, demo/, cli/) sit on top.
LAYERS: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "current": frozenset({"core"}),
    "planning": frozenset({"core", "current"}),
    "local": frozenset({"core"}),
    "warehouse": frozenset({"core", "current", "planning"}),
    "ops": frozenset({"core", "current", "planning", "warehouse"}),
    "sink": frozenset({"core", "current", "planning", "warehouse", "ops"}),
    "cloudfn": frozenset({"core", "current", "planning", "warehouse", "ops"}),
    "demo": frozenset({"core", "current", "planning", "warehouse", "ops", "local", "sink", "cloudfn"}),
    "cli": frozenset({"core", "current", "planning", "warehouse", "ops", "local", "sink", "cloudfn", "demo"}),
}

#: The modules allowed at the top of uniview/ beside the packages (each imports nothing of uniview).
TOP_LEVEL_MODULES = frozenset({"__init__"})


@dataclass(frozen=True)
class Import:
    """`importer` (a dotted module) imports `imported` at line `line`."""

    importer: str
    imported: str
    line: int


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at `root` (a folder named uniview), by dotted name."""
    return {module_name(root, path): path for path in sorted(root.rglob("*.py"))}


def imports(root: Path) -> list[Import]:
    """Every import of a uniview module by a uniview module; `from a import b` names a.b when b is a module."""
    known = modules(root)
    found = []
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            found.extend(Import(name, target, node.lineno) for target in _targets(node, known))
    return found


def _targets(node: ast.AST, known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name.split(".")[0] == "uniview")
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "uniview":
        module = node.module or ""
        for alias in node.names:
            yield f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module


def package_of(module: str) -> str:
    """The subsystem a dotted module belongs to: uniview.<package>..., or its own name at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def violations(found: list[Import]) -> list[str]:
    """Each import of a package its importer may not import, as `importer:line imports imported (rule)`.
    A package's `__main__` (`python -m uniview.sink`) is an entry point, an adapter like the CLI it runs."""
    wrong = []
    for edge in found:
        if edge.importer.endswith(".__main__") and package_of(edge.imported) == "cli":
            continue
        mine, theirs = package_of(edge.importer), package_of(edge.imported)
        if mine == theirs or theirs == "__init__":
            continue
        allowed = LAYERS.get(mine)
        if allowed is None or theirs not in allowed:
            rule = f"{mine} may import {sorted(allowed)}" if allowed is not None else f"{mine} is not a known package"
            wrong.append(f"{edge.importer}:{edge.line} imports {edge.imported} ({rule})")
    return wrong


def cycles(found: list[Import]) -> list[list[str]]:
    """The import circles between modules (strongly connected components of more than one module)."""
    graph: dict[str, set[str]] = {}
    for edge in found:
        graph.setdefault(edge.importer, set()).add(edge.imported)
        graph.setdefault(edge.imported, set())
    return [sorted(component) for component in _components(graph) if len(component) > 1]


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit on deep chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found
