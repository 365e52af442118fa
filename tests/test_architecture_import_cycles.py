"""No import cycles between the project's modules (docs/architecture.md): services fire Celery tasks by name
(``pooling.task_names``, ``evaluation.task_names``) instead of importing the tasks modules that import them, and
the macro modules build on ``evaluation.core.judged_ranking`` without importing each other back.

Every ``import`` counts, also one inside a function or under ``TYPE_CHECKING``: a lazy import hides a cycle from
Python, not from the reader. Tests and migrations are left out.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_PARTS = {"tests", "migrations", ".venv", ".git", "node_modules"}


def module_files(root: Path) -> dict[str, Path]:
    modules = {}
    for path in root.rglob("*.py"):
        relative = path.relative_to(root)
        if SKIPPED_PARTS & set(relative.parts[:-1]):
            continue
        name = ".".join(relative.with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports (``from a import b`` counts for ``a`` and, if a module, ``a.b``)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            graph[name].update(target for target in targets if target in modules and target != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def test_the_analysis_finds_cycles(tmp_path):
    for name, text in {"a/__init__.py": "", "a/x.py": "from a import y\n", "a/y.py": "def f():\n    from .z import g\n",
                       "a/z.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a.x\n",
                       "a/w.py": "import a.x\n"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cycles(import_graph(module_files(tmp_path))) == [{"a.x", "a.y", "a.z"}]


def test_no_import_cycles():
    graph = import_graph(module_files(ROOT))
    assert {"pooling.tasks", "pooling.services.pools", "evaluation.core.macro"} <= set(graph)
    found = [sorted(component) for component in cycles(graph)]
    assert found == [], f"import cycles: {found}"
