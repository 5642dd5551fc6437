"""What the packages take from each other, read from every module's imports (function-level
ones too): only public names across subpackages, and no import cycle between them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("awlineage", "dataserver", "targets", "webviewer", "benchmarks")
"""Where only public names may be taken from other packages (tests may reach inside)."""


def _unit(module: str) -> str | None:
    """The part of the project a module belongs to: an awlineage subpackage (or top-level
    module), a top-level package, or ``awlineage`` itself (the public surface, which imports
    every subpackage: a subpackage that takes a name from it depends on all of them)."""
    parts = module.split(".")
    if parts[0] == "awlineage":
        if len(parts) > 1 and ((ROOT / "awlineage" / parts[1]).is_dir()
                               or (ROOT / "awlineage" / f"{parts[1]}.py").is_file()):
            return ".".join(parts[:2])
        return "awlineage"
    if parts[0] in CHECKED:
        return parts[0]
    return None


def _modules() -> Iterator[tuple[Path, str, ast.Module]]:
    for top in CHECKED:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield path, name, ast.parse(path.read_text(), str(path))


def _imports(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """Each imported name, fully qualified (``from a.b import c`` gives ``a.b`` and
    ``a.b.c``); relative imports resolved against `module`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                package = package if is_package else package[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join([*package, *([base] if base else [])])
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__")
               for part in name.split(".")[1:])


def test_packages_take_only_public_names_from_each_other() -> None:
    reaching_in = []
    for path, module, tree in _modules():
        here = _unit(module)
        for line, name in _imports(tree, module, path.name == "__init__.py"):
            there = _unit(name)
            if there is not None and there != here and _private(name):
                reaching_in.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert reaching_in == []


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path, module, tree in _modules():
        here = _unit(module)
        if here is None:
            continue
        for _, name in _imports(tree, module, path.name == "__init__.py"):
            there = _unit(name)
            if there is not None and there != here and name != "awlineage":
                graph.setdefault(here, set()).add(there)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None


def test_no_import_cycle_between_packages() -> None:
    assert _cycle(_graph()) is None


def test_the_framework_imports_neither_the_pipeline_nor_the_viewer() -> None:
    """`awl demo`, `awl ingest` and `awl serve` come through entry points: no module of
    awlineage imports targets or webviewer, not even inside a function."""
    reaching_up = []
    for path, module, tree in _modules():
        if _unit(module) is None or not module.startswith("awlineage"):
            continue
        for line, name in _imports(tree, module, path.name == "__init__.py"):
            if name.split(".")[0] in ("targets", "webviewer"):
                reaching_up.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert reaching_up == []


def test_the_upward_import_check_sees_a_function_level_import() -> None:
    tree = ast.parse("def run():\n    from targets.demo import run_demo\n")
    assert [name for _, name in _imports(tree, "awlineage.cli._x", False)] == [
        "targets.demo", "targets.demo.run_demo"]
