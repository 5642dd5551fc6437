"""The ``awl`` command. Each command group lives in a module of its own that adds its
subcommands to the parser (`COMMAND_MODULES`); other packages add theirs through the
``awlineage.commands`` entry points (`COMMANDS_GROUP`), as the example pipeline adds ``demo``
and ``ingest`` and the viewer ``serve``. This module assembles them and runs one.

What a plug-in command may use besides the public API: the argparse types `real_number`,
`port_number`, and `listening_socket`, `serve_on` and `LOG_LEVELS` for a server.

The contract of an entry point of the group
-------------------------------------------
An entry point names a function ``add(subparsers)``; it receives the
``argparse._SubParsersAction`` of ``awl`` and adds its command(s) to it::

    def add_commands(commands: argparse._SubParsersAction) -> None:
        parser = commands.add_parser("hello", help="one line for awl --help")
        parser.add_argument("--name", default="world")
        parser.set_defaults(run=_run)

    def _run(args: argparse.Namespace) -> int:   # the exit status
        from mypackage.heavy import greet         # imported when run, not when listed
        ...

and is declared in the package's metadata, with the extras its command needs::

    [options.entry_points]
    awlineage.commands =
        hello = mypackage.cli:add_commands [web]

- The entry point's name is the command's name (``awl hello``); a name ``awl`` has already
  is refused.
- ``run(args)`` gets the parsed arguments (``args.database``: the global ``--database``, None
  when not given) and returns the exit status.
- Errors are raised as `awlineage.errors.AwlError` (or a subclass); ``awl`` prints them as one
  line ``awl: ...`` and exits with status 2.
- Modules a command needs to *run* are imported inside ``run``: a package an extra installs
  that is missing then makes the command one line naming the extra (from the entry point's
  ``[extra]``), and never breaks ``awl --help`` or the other commands. An entry point that
  cannot be loaded at all is listed with a note, and running it says why.
- ``awl`` loads only the plug-in a command line names (all of them for ``awl --help``), so a
  slow or broken plug-in costs the other commands nothing.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from awlineage import config
from awlineage.cli._arguments import real_number
from awlineage.cli._common import working_directory_first
from awlineage.cli._listen import LOG_LEVELS, listening_socket, port_number, serve_on
from awlineage.cli._plugins import COMMANDS_GROUP, add_plugin_commands, command_word
from awlineage.errors import AwlError, MissingExtraError

if TYPE_CHECKING:  # imported once a command uses the database: ``awl --help`` does not
    import sqlalchemy as sa

__all__ = ["COMMANDS_GROUP", "LOG_LEVELS", "build_parser", "listening_socket", "main",
           "port_number", "real_number", "serve_on", "shown_url"]

COMMAND_MODULES = (
    "awlineage.cli._select",
    "awlineage.cli._schema",
    "awlineage.cli._lineage",
    "awlineage.cli._retract",
    "awlineage.cli._affected",
    "awlineage.cli._sites",
    "awlineage.cli._regions",
    "awlineage.cli._cutout",
    "awlineage.cli._make",
    "awlineage.cli._dataserver",
    "awlineage.cli._spark",
)
"""Modules with an ``add_commands(subparsers)`` function, in the order of ``awl --help``
(the plug-in commands follow, by name)."""
RETRY_PAUSE = 1.0
"""Seconds before a read-only command is run again after a lost database connection."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other ``awl`` error."""

    unavailable: dict[str, AwlError]
    """Plug-in commands that cannot be loaded, and why (`add_plugin_commands`)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's, with a negative value such as ``--radius -3arcsec`` taken as the
        option's value, so the option's own check refuses it by name."""
        if args is not None:
            args = _glue_negative_values(self, list(args))
        return super().parse_known_args(args, namespace)


NEGATIVE_VALUE = re.compile(r"-\.?\d")
"""The start of a negative value (``-3arcsec``, ``-0.5deg``, ``-1e3``). argparse takes a bare
negative number as a value but anything else that starts with ``-`` as an option, so
``--radius -3arcsec`` failed with "expected one argument" instead of saying what is wrong."""


def _glue_negative_values(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """`args` with each ``--option -value`` of an option of `parser` that takes one value
    written ``--option=-value``; nothing after ``--`` is touched."""
    takes_one = {name for action in parser._actions if action.nargs is None
                 for name in action.option_strings if name.startswith("--")}
    glued: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            return glued + args[index:]
        if (word in takes_one and index + 1 < len(args)
                and NEGATIVE_VALUE.match(args[index + 1])):
            glued.append(f"{word}={args[index + 1]}")
            index += 2
            continue
        glued.append(word)
        index += 1
    return glued


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``awl``, with the subcommands of every command module and plug-in.

    Given the command line `argv`, only the plug-in it names is loaded.

    Parameters
    ----------
    argv : Sequence of str, optional
        The command line without the program name; None loads every plug-in.

    Returns
    -------
    argparse.ArgumentParser
        The parser; plug-ins whose extra is missing are in its ``unavailable`` attribute.
    """
    parser = _Parser(prog="awl", description="awlineage: persistent objects "
                                     "and lineage for scientific pipelines")
    parser.add_argument("--database", help="database URL (default: AWL_DATABASE_URL or "
                        "sqlite:///awlineage.db)")
    parser.add_argument("--version", action="version",
                        version=f"awl {importlib.metadata.version('awlineage')}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(commands)
    parser.unavailable = add_plugin_commands(commands, argv)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``awl``; returns the exit status.

    An error is reported in one line on stderr, and the status is 2 (``AWL_TRACEBACK=1``
    shows the traceback of an unexpected one).

    Parameters
    ----------
    argv : Sequence of str, optional
        The command line without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: the command's (0 when it succeeds), 2 for an error, 130 when
        interrupted.
    """
    working_directory_first()
    _quiet_third_party_warnings()
    args: argparse.Namespace | None = None
    try:
        # inside: an argument type that fails in a way argparse does not catch is one line too
        given = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(given)
        unavailable: dict[str, AwlError] = getattr(parser, "unavailable", {})
        word = command_word(given)
        if word in unavailable:  # before its arguments, which nothing here knows
            raise unavailable[word]
        args = parser.parse_args(given)
        return _run(args)
    except MissingExtraError as exc:  # the message says it all: what needs which extra
        print(f"awl: {exc}", file=sys.stderr)
        return 2
    except AwlError as exc:
        print(f"awl: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except _database_errors() as exc:  # the database went away or refused us
        print(f"awl: {database_failure(args, exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (e.g. `head`) stopped early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("awl: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a file named on the command line: the message names it
        print(f"awl: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # A bug (ours or a plug-in's) still ends in one line; the traceback is one setting away.
        if os.environ.get("AWL_TRACEBACK"):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"awl: unexpected {type(exc).__name__}: {first} (AWL_TRACEBACK=1 shows where; "
              "please report it)", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    """Run the command; a read-only one is run once more after a lost connection (each run
    opens its own engine), since reading again cannot leave anything half-written."""
    try:
        return args.run(args)
    except _database_errors() as exc:
        if not (getattr(args, "read_only", False) and is_disconnect(exc)):
            raise
        time.sleep(RETRY_PAUSE)
        return args.run(args)


def _database_errors() -> tuple[type[sa.exc.DBAPIError], ...]:
    """SQLAlchemy's DBAPIError once SQLAlchemy is imported (nothing else can raise it), or no
    class at all, so that matching an exception does not import it."""
    exc = sys.modules.get("sqlalchemy.exc")
    return () if exc is None else (exc.DBAPIError,)


def is_disconnect(exc: sa.exc.DBAPIError) -> bool:
    """Whether `exc` is a lost or refused connection rather than a failing statement (a
    refused login is neither: trying again cannot help)."""
    import sqlalchemy as sa

    if refused_login(exc) is not None:
        return False
    return bool(exc.connection_invalidated) or isinstance(exc, sa.exc.OperationalError)


REFUSED_LOGIN = re.compile(r'authentication failed for user "([^"]*)"')
"""What PostgreSQL says (through psycopg) of a wrong password or a user it does not know; the
error carries no SQLSTATE when the connection was never opened, so its text is all there is."""


def refused_login(exc: sa.exc.DBAPIError) -> str | None:
    """The user whose login the database refused in `exc`, or None for another failure."""
    found = REFUSED_LOGIN.search(str(exc.orig if exc.orig is not None else exc))
    return None if found is None else found.group(1)


def shown_url(url: str, unparsable: str = "the database") -> str:
    """A database URL as a command says it: its password masked.

    Parameters
    ----------
    url : str
        The URL as given (``postgresql+psycopg://awl:secret@host/db``).
    unparsable : str, optional
        What to say for text that is no URL.

    Returns
    -------
    str
        The URL with ``***`` for its password (``awl:***@host``), or `unparsable`.
    """
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return unparsable


def database_failure(args: argparse.Namespace | None, exc: sa.exc.DBAPIError) -> str:
    """One line saying which database failed and how (never the statement or its values)."""
    url = config.setting("database_url", getattr(args, "database", None))
    shown = shown_url(url)
    reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
    user = refused_login(exc)
    if user is not None:  # not "lost the connection": there never was one, and why is known
        return f"DatabaseUnavailable: {shown} refused the login: authentication failed for " \
               f"user {user!r} (check the user and password of --database or " \
               "AWL_DATABASE_URL or awl.toml's database_url)"
    if is_disconnect(exc):
        return f"DatabaseUnavailable: lost or could not open the connection to {shown} " \
               f"(nothing was committed by the failed step): {reason}"
    return f"DatabaseError: {shown} refused a statement: {type(exc.orig).__name__}: {reason}"


def _quiet_third_party_warnings() -> None:
    """Hide FutureWarnings that pyspark, pandas and py4j give about their own internals: they
    say nothing to a user of ``awl``."""
    for module in ("pyspark", "pandas", "py4j"):
        warnings.filterwarnings("ignore", category=FutureWarning, module=module)
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)

