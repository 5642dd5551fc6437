"""``awl demo``: the main job, on the embedded defaults."""

from __future__ import annotations

import argparse


def _run(args: argparse.Namespace) -> int:
    from awlineage.demo import run_demo

    return run_demo(args.database)


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``demo`` to the ``awl`` parser."""
    demo = commands.add_parser("demo", help="run the demo on the embedded defaults")
    demo.set_defaults(run=_run)
