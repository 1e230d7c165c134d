"""No import circle in assay, between packages or between modules (issue 24).

grimp (the graph import-linter checks) sees every import: at module level, inside functions
and under `if TYPE_CHECKING`, so an import moved into a function to dodge a circle still
counts. pyproject.toml's import contracts (`lint-imports`, run by `make lint`) keep the
layers; this counts the circles themselves and names them when there are any.

    python tests/test_import_cycles.py     # prints the counts
"""

from __future__ import annotations

import functools
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping

import grimp


def circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (each a circle or several
    interlocked ones), sorted; an iterative Tarjan, so deep graphs need no recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    nodes = sorted(set(edges) | {w for ws in edges.values() for w in ws})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def package_of(module: str) -> str:
    """assay.plan.build -> assay.plan; assay.engine -> assay.engine."""
    return ".".join(module.split(".")[:2])


@functools.cache
def assay_graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """assay's imports between modules, and between its top-level packages."""
    graph = grimp.build_graph("assay", cache_dir=None)  # no cache left in the tree
    modules: dict[str, set[str]] = defaultdict(set)
    packages: dict[str, set[str]] = defaultdict(set)
    for m in graph.modules:
        for imported in graph.find_modules_directly_imported_by(m):
            modules[m].add(imported)
            if package_of(m) != package_of(imported):
                packages[package_of(m)].add(package_of(imported))
    return modules, packages


def test_circles_are_found() -> None:
    """The counter itself: a circle of three, a self-contained pair, and a chain without one."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "x": {"y"}, "y": {"x"}}
    assert circles(edges) == [["a", "b", "c"], ["x", "y"]]
    assert circles({"a": {"b"}, "b": {"c"}}) == []


def test_no_circle_between_packages() -> None:
    _, packages = assay_graphs()
    assert "assay.plan" in packages and "assay.actions" in packages["assay.plan"]  # real graph
    found = circles(packages)
    assert found == [], f"{len(found)} circle(s) between packages: {found}"


def test_no_circle_between_modules() -> None:
    modules, _ = assay_graphs()
    assert len(modules) > 100
    found = circles(modules)
    assert found == [], f"{len(found)} circle(s) between modules: {found}"


if __name__ == "__main__":
    mods, pkgs = assay_graphs()
    for what, edges in (("packages", pkgs), ("modules", mods)):
        found = circles(edges)
        print(f"{what}: {len(found)} circle(s), {sum(map(len, found))} in them")
        for c in found:
            print("   ", " ".join(c))
    sys.exit(1 if circles(pkgs) or circles(mods) else 0)
