"""Syntax trees of the user's code as code versions see them: parsed from source without
docstrings, dumped without line numbers, and the dotted names a tree refers to."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from typing import Any, TypeVar

_DOCUMENTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)


def digest(text: str) -> str:
    """16 hex digits of the SHA-256 of `text`."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def function_tree(function: Any) -> ast.AST | None:
    """The syntax tree of `function`'s source, docstrings removed; None without source.

    Found in its module's parsed source by first line (one parse per module); functions that
    are not there as written (lambdas, code made at run time) are parsed on their own."""
    code = function.__code__
    module = sys.modules.get(function.__module__)
    if code.co_filename == getattr(module, "__file__", None):
        node = _parsed_module(module).functions.get(code.co_firstlineno)
        if node is not None and node.name == function.__name__:
            return ast.Module([node], [])  # as parsed from the function's own source
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    return without_docstrings(tree)


def class_tree(cls: type) -> ast.AST | None:
    """The syntax tree of `cls`'s definition, docstrings removed; None without source."""
    module = sys.modules.get(cls.__module__)
    for node in module_statements(module):
        if isinstance(node, ast.ClassDef) and node.name == cls.__qualname__:
            return ast.Module([node], [])
    try:  # nested classes: inspect finds them
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    return without_docstrings(tree)


_Tree = TypeVar("_Tree", bound=ast.AST)


def without_docstrings(tree: _Tree) -> _Tree:
    """`tree` with the docstring of every module, class and function in it removed."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def dump(tree: ast.AST | list[ast.stmt]) -> str:
    """`tree` as text without field names, line numbers or formatting."""
    if isinstance(tree, list):
        return "\n".join(dump(node) for node in tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def bytecode(code: Any) -> str:
    """The instructions, names and constants of a code object, nested code included: the
    stand-in for a syntax tree when there is no source (functions typed interactively)."""
    parts = [code.co_code.hex(), repr(code.co_names)]
    for const in code.co_consts:
        parts.append(bytecode(const) if inspect.iscode(const) else repr(const))
    return "|".join(parts)


def module_assignments(module: Any) -> dict[str, list[ast.stmt]]:
    """Top-level name -> the statements of `module` that assign it (not defs or imports)."""
    found: dict[str, list[ast.stmt]] = {}
    for node in module_statements(module):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(node)
    return found


@dataclass(frozen=True)
class _ParsedModule:
    statements: list[ast.stmt]
    """Top-level statements, those in top-level ``if``/``try`` blocks included."""
    functions: dict[int, ast.FunctionDef | ast.AsyncFunctionDef]
    """Every function and method by the first line of its code (its first decorator's)."""


_UNREADABLE = _ParsedModule([], {})


def module_statements(module: Any) -> list[ast.stmt]:
    """The top-level statements of `module` (docstrings removed), those in top-level
    ``if``/``try`` blocks included; empty when its source cannot be read."""
    return _parsed_module(module).statements


def _parsed_module(module: Any) -> _ParsedModule:
    file = getattr(module, "__file__", None)
    if not file or not file.endswith(".py"):
        return _UNREADABLE
    try:
        status = os.stat(file)
    except OSError:
        return _UNREADABLE
    # keyed by modification time and size: a module edited and loaded again is parsed again
    return _parsed(file, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=512)
def _parsed(file: str, mtime_ns: int, size: int) -> _ParsedModule:
    try:
        with tokenize.open(file) as handle:
            tree = without_docstrings(ast.parse(handle.read()))
    except (OSError, SyntaxError, ValueError):
        return _UNREADABLE
    statements: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        statements.append(node)
        if isinstance(node, ast.If | ast.Try):
            pending.extend(node.body + node.orelse + getattr(node, "finalbody", []))
    functions = {min([node.lineno, *(d.lineno for d in node.decorator_list)]): node
                 for node in ast.walk(tree)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    return _ParsedModule(statements, functions)


def referenced_names(tree: ast.AST | list[ast.stmt]) -> set[tuple[str, ...]]:
    """The names and dotted attribute chains (``reduction.reduce_science``) that `tree` reads,
    leaving out annotations, which do not run."""
    finder = _NameFinder()
    for node in tree if isinstance(tree, list) else [tree]:
        finder.visit(node)
    return finder.found


class _NameFinder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: set[tuple[str, ...]] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.found.add((node.id,))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain: list[str] = []
        current: ast.expr = node
        while isinstance(current, ast.Attribute):
            chain.append(current.attr)
            current = current.value
        if isinstance(current, ast.Name):
            self.found.add((current.id, *reversed(chain)))
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        pass  # a parameter's annotation

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for child in [*node.decorator_list, node.args, *node.body]:
            self.visit(child)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)
