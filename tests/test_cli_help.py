"""Every option and positional of every ``awl`` command, plug-ins included, says what it is
in ``--help`` (a new user found a dozen that did not)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from awlineage.cli import build_parser


def _parsers(parser: argparse.ArgumentParser, prog: str = "awl"
             ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """`parser` and every subcommand parser under it, with the command line that names it."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def test_every_argument_has_help() -> None:
    parser = build_parser()
    assert not getattr(parser, "unavailable", {}), "a plug-in command could not be loaded"
    missing = [f"{prog} {'/'.join(action.option_strings) or action.dest}"
               for prog, sub in _parsers(parser)
               for action in sub._actions
               if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
               and not (action.help or "").strip()]
    assert missing == []


def test_help_texts_format() -> None:
    """Each ``--help`` renders: a stray ``%`` in a help text would fail only when shown."""
    for _prog, sub in _parsers(build_parser()):
        assert sub.format_help()
