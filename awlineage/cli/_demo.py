"""``awl demo``: the main job, on the embedded defaults (an SQLite file and a data directory in
the working directory, Spark in local mode): the imaging pipeline on a synthetic night."""

from __future__ import annotations

import argparse

from awlineage.cli._arguments import real_number


def _run(args: argparse.Namespace) -> int:
    from targets.demo import run_demo

    return run_demo(args.database, size=args.size, executor=args.executor,
                    cosmic_ray_threshold=args.cosmic_ray_threshold, colour=args.colour)


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``demo`` to the ``awl`` parser."""
    demo = commands.add_parser("demo", help="generate a night, ingest it, pull its source "
                               "lists and trace a star back to its raw pixels")
    demo.add_argument("--size", choices=("small", "medium", "large"), default="small")
    demo.add_argument("--executor", choices=("spark", "serial"), default="spark")
    demo.add_argument("--cosmic-ray-threshold", type=real_number("a detection limit", above=True),
                      metavar="SIGMA",
                      help="LACosmic's detection limit (default 4.5): changing it remakes only "
                           "what depends on it")
    demo.add_argument("--colour", "--color", choices=("auto", "always", "never"),
                      default="auto")
    demo.set_defaults(run=_run)
