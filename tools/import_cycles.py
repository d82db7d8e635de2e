"""Find import cycles inside each suite (``python tools/import_cycles.py [SUITE ...]``).

Two graphs per suite, read from the source with ``ast`` (nothing is imported):

* module level: imports run when the module loads (``if TYPE_CHECKING:`` blocks left out);
  a cycle here is a real one, which only works while the order of first imports allows it;
* hidden: the same plus imports inside functions; a cycle that needs a function-level edge is
  one that a function-level import hides (it would be a real cycle at module level).

Importing ``pkg.sub.mod`` also runs ``pkg/__init__`` and ``pkg/sub/__init__``, so those count
as edges too. Exit status 1 when a module-level cycle exists, else 0; with ``--hidden`` a cycle
hidden by a function-level import fails too (``python tools/import_cycles.py --hidden [SUITE ...]``).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

SUITES_DIR = Path(__file__).resolve().parents[1] / "src" / "buildbench" / "suites"
PREFIX = "buildbench.suites"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    module_level: bool


def module_name(path: Path) -> str:
    rel = path.relative_to(SUITES_DIR).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PREFIX, *parts])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement with whether it runs at module load."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, module_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child, module_level))
            inner = module_level and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            visit(child, inner)

    visit(tree, True)
    return found


def _targets(node: ast.Import | ast.ImportFrom, source: str, is_package: bool, known: set[str]) -> list[str]:
    """The suite modules an import statement loads (the named module, its parents, and names
    that are submodules)."""
    if isinstance(node, ast.Import):
        bases = [alias.name for alias in node.names]
        names: list[str] = []
    else:
        if node.level:
            package = source if is_package else source.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                package = package.rsplit(".", 1)[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module or ""
        bases = [base]
        names = [f"{base}.{alias.name}" for alias in node.names]
    out: list[str] = []
    for name in [*bases, *names]:
        parts = name.split(".")
        for i in range(3, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in known and prefix != source:
                out.append(prefix)
    return out


def suite_edges(suite: str) -> list[Edge]:
    root = SUITES_DIR / suite
    files = sorted(root.rglob("*.py"))
    known = {module_name(p) for p in files}
    top = f"{PREFIX}.{suite}"
    edges = []
    for path in files:
        source = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, module_level in _imports(tree):
            for target in _targets(node, source, path.name == "__init__.py", known):
                if target.startswith(top) and not source.startswith(target + "."):
                    edges.append(Edge(source, target, module_level))
    return edges


def cycles(edges: list[Edge], *, module_level_only: bool) -> list[list[str]]:
    """The modules of each group that import one another in a circle (a strongly connected
    component), in name order."""
    graph = nx.DiGraph()
    graph.add_edges_from((e.source, e.target) for e in edges if e.module_level or not module_level_only)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def shortest_cycle(edges: list[Edge], members: list[str]) -> list[str]:
    """One shortest circle through the group, starting at its first module by name."""
    graph = nx.DiGraph()
    graph.add_edges_from((e.source, e.target) for e in edges if e.source in members and e.target in members)
    best = min(nx.simple_cycles(graph), key=lambda c: (len(c), sorted(c)))
    start = best.index(min(best))
    return best[start:] + best[:start]


def _short(cycle: list[str]) -> str:
    return " -> ".join(m.removeprefix(PREFIX + ".") for m in [*cycle, cycle[0]])


def main(argv: list[str]) -> int:
    strict = "--hidden" in argv
    argv = [a for a in argv if a != "--hidden"]
    suites = argv or sorted(p.name for p in SUITES_DIR.iterdir() if (p / "__init__.py").is_file())
    failing = 0
    for suite in suites:
        edges = suite_edges(suite)
        loaded = cycles(edges, module_level_only=True)
        hidden = [c for c in cycles(edges, module_level_only=False) if not any(set(c) <= set(m) for m in loaded)]
        failing += len(loaded) + (len(hidden) if strict else 0)
        print(f"{suite}: {len(loaded)} module-level cycle(s), {len(hidden)} hidden by function-level imports")
        for group in loaded:
            shortest = shortest_cycle([e for e in edges if e.module_level], group)
            print(f"  module level: {_short(shortest)} ({len(group)} modules in the group)")
        for group in hidden:
            print(f"  hidden:       {_short(shortest_cycle(edges, group))} ({len(group)} modules in the group)")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
