"""Commands that other packages add to ``awl`` through the ``awlineage.commands`` entry-point
group (as Rubin's Butler takes its CLI plug-ins): awlineage's own ``demo`` and ``ingest`` come
from the example pipeline (`targets`), ``serve`` from the viewer (`webviewer`).

The contract a plug-in follows is in the docstring of `awlineage.cli`.
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
from collections.abc import Callable, Sequence
from typing import Any

from awlineage.errors import AwlError
from awlineage.extras import DISTRIBUTION, missing_extra

COMMANDS_GROUP = "awlineage.commands"
"""The entry-point group of ``awl``'s plug-in commands."""

Run = Callable[[argparse.Namespace], int]


class PluginError(AwlError):
    """A plug-in command of ``awl`` cannot be loaded (not a missing extra: a broken package)."""


def command_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The entry points of `COMMANDS_GROUP` by name (the first one found of each name)."""
    points: dict[str, importlib.metadata.EntryPoint] = {}
    for point in importlib.metadata.entry_points(group=COMMANDS_GROUP):
        points.setdefault(point.name, point)
    return dict(sorted(points.items()))


def command_word(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is not an option of ``awl``
    itself (``--database URL``), or None (``awl --help``, or nothing)."""
    words = iter(argv)
    for word in words:
        if word == "--database":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def add_plugin_commands(commands: argparse._SubParsersAction,
                        argv: Sequence[str] | None = None) -> dict[str, AwlError]:
    """Add the plug-in commands to ``awl``'s subparsers: only the one `argv` names when it
    names one; none when it names a built-in command; all otherwise (help, a mistyped
    command, or `argv` None: the whole parser, for documentation).

    Returns
    -------
    dict
        The error of each plug-in added that cannot be loaded, by command name: listed in
        the help with a note, and raised (before its arguments are parsed) when run.
    """
    points = command_entry_points()
    word = command_word(argv) if argv is not None else None
    unavailable: dict[str, AwlError] = {}
    if word in commands.choices:
        return unavailable
    for name, point in points.items():
        if word is None or word == name or word not in points:
            error = _add(commands, name, point)
            if error is not None:
                unavailable[name] = error
    return unavailable


def _add(commands: argparse._SubParsersAction, name: str,
         point: importlib.metadata.EntryPoint) -> AwlError | None:
    if name in commands.choices:
        return None  # a plug-in cannot replace a built-in command (nor an earlier plug-in)
    before = set(commands.choices)
    try:
        point.load()(commands)
    except Exception as exc:
        error = _load_error(name, point, exc)
        if name not in commands.choices:
            commands.add_parser(name, help=f"(not available: {error})", add_help=False)
        return error
    for added in set(commands.choices) - before:
        parser = commands.choices[added]
        run = parser.get_default("run")
        if run is not None:
            parser.set_defaults(run=_naming_extras(run, added, point))
    return None


def _distribution(point: importlib.metadata.EntryPoint) -> str:
    return point.dist.name if point.dist is not None else DISTRIBUTION


def entry_point_extra_error(what: str, point: importlib.metadata.EntryPoint,
                            exc: ModuleNotFoundError) -> AwlError | None:
    """The missing-extra error for a package `exc` did not find while `point` loaded or ran,
    when the entry point declares extras (``name = module:attr [extra]``) and the missing
    package is not the entry point's own; None otherwise (a broken package, not an extra).
    `what` is what needs the package, as the start of the error's sentence."""
    missing = (exc.name or "").split(".")[0]
    if not point.extras or not missing or missing == point.module.split(".")[0]:
        return None
    return missing_extra(what, missing, ",".join(point.extras),
                         distribution=_distribution(point))


def _load_error(name: str, point: importlib.metadata.EntryPoint, exc: Exception) -> AwlError:
    if isinstance(exc, AwlError):
        return exc
    if isinstance(exc, ModuleNotFoundError):
        found = entry_point_extra_error(f"awl {name}", point, exc)
        if found is not None:
            return found
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return PluginError(f"the command {name!r} of {_distribution(point)} ({COMMANDS_GROUP} "
                       f"entry point {point.value}) cannot be loaded: {first}")


def _naming_extras(run: Run, name: str, point: importlib.metadata.EntryPoint) -> Run:
    """`run`, with a package missing while it runs reported as the extra to install."""

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> Any:
        try:
            return run(args)
        except ModuleNotFoundError as exc:
            found = entry_point_extra_error(f"awl {name}", point, exc)
            if found is None:
                raise
            raise found from None

    return wrapped


__all__ = ["COMMANDS_GROUP", "PluginError", "add_plugin_commands", "command_entry_points",
           "command_word", "entry_point_extra_error"]
