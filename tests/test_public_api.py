"""The public API holds: the pipeline (`targets`) and the viewer (`webviewer`) use only public
names, and every public name has a docstring and an API page.

A name is public when it is in the ``__all__`` of `awlineage` or of one of the documented
subpackages (`PUBLIC_MODULES`), has a docstring, and the module's page ``docs/api/<name>.md``
holds its ``automodule`` directive. Imports are read from the source (function-level ones and
``import a.b`` forms too), so a forbidden import fails here before anyone runs it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable, Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
USERS = ("targets", "webviewer")
"""The packages written as a user of awlineage would write them: public names only."""
PUBLIC_MODULES = ("awlineage", *(f"awlineage.{name}" for name in (
    "blast_radius", "cli", "config", "cutouts", "database", "errors", "extras", "federation",
    "lineage", "persistence", "processing", "query", "regions", "retraction", "spacetime",
    "storage", "trace")))
"""The modules whose ``__all__`` is public, each with an API page."""


def _page(module: str) -> Path:
    """The API page of `module`: ``docs/api/regions.md`` for `awlineage.regions`."""
    return ROOT / "docs" / "api" / f"{module.rsplit('.', 1)[-1]}.md"


def _attribute_docstring(module: ModuleType, name: str) -> str | None:
    """The docstring written under a module-level assignment to `name` (the string that
    follows it, as Sphinx reads it) in the source of `module`'s package."""
    source = Path(inspect.getfile(module))
    files = sorted(source.parent.rglob("*.py")) if source.name == "__init__.py" else [source]
    for path in files:
        body = ast.parse(path.read_text()).body
        for statement, following in pairwise(body):
            targets = ([statement.target] if isinstance(statement, ast.AnnAssign)
                       else statement.targets if isinstance(statement, ast.Assign) else [])
            if (any(isinstance(t, ast.Name) and t.id == name for t in targets)
                    and isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                return following.value.value
    return None


def _docstring(module: ModuleType, name: str) -> str | None:
    """The docstring of `name` in `module`: its own (not one inherited from a base class or
    from the type of a value), or the attribute docstring of a constant."""
    obj = getattr(module, name)
    if inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj):
        doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        return doc if isinstance(doc, str) and doc.strip() else None
    return _attribute_docstring(module, name)


@cache
def why_not_public(module_name: str, name: str) -> str | None:
    """None when `name` of `module_name` is public; otherwise the reason it is not."""
    if module_name not in PUBLIC_MODULES:
        return f"{module_name} is not a public module ({', '.join(PUBLIC_MODULES)})"
    module = importlib.import_module(module_name)
    if f"{module_name}.{name}" in PUBLIC_MODULES:
        return None  # a public module itself, reached as an attribute of its package
    if name not in getattr(module, "__all__", ()):
        return f"{name} is not in {module_name}.__all__"
    if not hasattr(module, name):
        return f"{module_name}.__all__ names {name}, which {module_name} does not define"
    if _docstring(module, name) is None:
        return f"{module_name}.{name} has no docstring"
    page = _page(module_name)
    if not page.is_file():
        return f"{module_name} has no API page {page.relative_to(ROOT)}"
    if f"automodule:: {module_name}\n" not in page.read_text():
        return f"{page.relative_to(ROOT)} has no automodule:: {module_name} directive"
    return None


@cache
def _module_of(dotted: str) -> tuple[str, str] | None:
    """(module, attribute) for a dotted awlineage name: the longest prefix that is a module,
    and the name after it (empty for a module itself)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = ".".join(parts[:cut])
        try:
            importlib.import_module(candidate)
        except ImportError:
            continue
        return candidate, ".".join(parts[cut:cut + 1])
    return None


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def used_names(tree: ast.Module) -> Iterator[tuple[int, str, str]]:
    """(line, module, name) for each awlineage name a module takes: from-imports (of names or
    of modules), ``import awlineage.x [as y]`` and then the attributes read through it."""
    bound: dict[str, str] = {}  # local name -> the awlineage module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and node.module.split(".")[0] == "awlineage":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _module_of(full) == (full, ""):
                    bound[alias.asname or alias.name] = full
                yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "awlineage":
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["awlineage"] = "awlineage"
                    if "." in alias.name:
                        package, name = alias.name.rsplit(".", 1)
                        yield node.lineno, package, name
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or isinstance(getattr(node, "parent", None),
                                                             ast.Attribute):
            continue
        parts = _dotted(node)
        if parts is None or parts[0] not in bound:
            continue
        found = _module_of(".".join([bound[parts[0]], *parts[1:]]))
        if found is not None and found[1]:
            yield node.lineno, *found


def _parented(tree: ast.Module) -> ast.Module:
    """`tree` with a ``parent`` on each node, so that only the outermost of ``a.b.c``'s
    attribute nodes is read."""
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child.parent = node  # type: ignore[attr-defined]
    return tree


def non_public_uses(source: str, where: str) -> list[str]:
    """Each use in `source` of an awlineage name that is not public, with the reason."""
    found = []
    for line, module, name in used_names(_parented(ast.parse(source))):
        reason = why_not_public(module, name)
        if reason is not None:
            found.append(f"{where}:{line} uses {module}.{name}: {reason}")
    return found


def test_pipeline_and_viewer_use_only_public_names() -> None:
    found = []
    for top in USERS:
        for path in sorted((ROOT / top).rglob("*.py")):
            found += non_public_uses(path.read_text(), str(path.relative_to(ROOT)))
    assert found == []


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_name_resolves_and_has_a_docstring(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert isinstance(getattr(module, "__all__", None), list), f"{module_name} has no __all__"
    assert module.__doc__, f"{module_name} has no module docstring"
    failing = [reason for name in module.__all__
               if (reason := why_not_public(module_name, name)) is not None]
    assert failing == []


def test_pipeline_takes_the_script_api_from_awlineage() -> None:
    """The pipeline is written as a user's script would be: a name `awlineage` exports
    (region operators included) is imported from there, not from its subpackage."""
    script_api = importlib.import_module("awlineage")
    elsewhere = [f"{path.relative_to(ROOT)}:{line} takes {name} from {module}"
                 for path in sorted((ROOT / "targets").rglob("*.py"))
                 for line, module, name in used_names(_parented(ast.parse(path.read_text())))
                 if module != "awlineage" and name in script_api.__all__
                 and getattr(importlib.import_module(module), name, None)
                 is getattr(script_api, name)]
    assert elsewhere == []


def _missing_sections(function: Callable[..., object]) -> list[str]:
    """The numpy-style sections `function`'s docstring lacks: Parameters when it takes any
    (besides ``self``/``cls``), Returns (or Yields) when it is annotated to return something."""
    doc, signature = inspect.getdoc(function) or "", inspect.signature(function)
    lacking = []
    if set(signature.parameters) - {"self", "cls"} and "\nParameters\n----------\n" not in doc:
        lacking.append("Parameters")
    # a function that always raises (NoReturn) and a generator (Yields) return nothing to describe
    if signature.return_annotation not in ("None", None, "NoReturn") \
            and "\nReturns\n-------\n" not in doc and "\nYields\n------\n" not in doc:
        lacking.append("Returns")
    return lacking


@pytest.mark.parametrize("module_name", PUBLIC_MODULES[1:])
def test_public_functions_of_each_module_document_parameters_and_returns(
        module_name: str) -> None:
    """Every public function a tool author may call (in a public module's ``__all__``) has
    numpy-style Parameters and Returns sections. (Those also in ``awlineage.__all__`` are held
    to the whole numpy standard by tests/test_public_docstrings.py.)"""
    module = importlib.import_module(module_name)
    lacking = [f"{module_name}.{name}: {section}" for name in module.__all__
               if inspect.isfunction(function := getattr(module, name))
               for section in _missing_sections(function)]
    assert lacking == []


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_module_has_an_api_page(module_name: str) -> None:
    page = _page(module_name)
    assert page.is_file(), f"no API page {page.relative_to(ROOT)}"
    text = page.read_text()
    assert f"```{{eval-rst}}\n.. automodule:: {module_name}\n" in text
    assert text.startswith("# "), f"{page.relative_to(ROOT)} has no title"


@pytest.mark.parametrize(("source", "reason"), [
    ("from awlineage.regions._builtins import elementwise\n",
     "awlineage.regions._builtins is not a public module"),
    ("def f():\n    from awlineage.regions import hdu_name\n",
     "hdu_name is not in awlineage.regions.__all__"),
    ("import awlineage.regions._call\n", "_call is not in awlineage.regions.__all__"),
    ("import awlineage.regions as r\nr.hdu_name('x')\n",
     "hdu_name is not in awlineage.regions.__all__"),
    ("import awlineage\nawlineage.regions._call.hdu_name\n",
     "awlineage.regions._call is not a public module"),
    ("from awlineage import regions\nregions.hdu_name\n",
     "hdu_name is not in awlineage.regions.__all__"),
])
def test_each_form_of_import_is_checked(source: str, reason: str) -> None:
    found = non_public_uses(source, "example.py")
    assert len(found) == 1 and reason in found[0], found


def test_public_names_pass_in_every_form_of_import() -> None:
    source = ("import awlineage\nimport awlineage.regions as r\n"
              "from awlineage import regions, elementwise\nfrom awlineage.config import setting\n"
              "awlineage.regions.stack\nr.reduce\nregions.Boxes.full\nawlineage.select\n")
    assert non_public_uses(source, "example.py") == []
