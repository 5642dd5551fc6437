"""What starting costs, and what the progress bar costs a large make.

1. Whole commands, each run as a fresh process, alternated round by round: ``python -c pass``
   (the interpreter alone), ``python -c "import awlineage"``, ``awl --help`` and
   ``awl --version`` (when ``awl`` has it); wall and CPU seconds (user + system of the child),
   median and spread (goals: ``import awlineage`` under 0.5 s, ``awl --help`` under 0.7 s, on a
   quiet machine). ``--compare-to DIR`` runs the same commands with another checkout first on
   the module path (``/work/main`` for the code before a change), alternated with this one.
2. The progress bar: ``TargetProcessor.make`` of N trivial targets with the bar on (drawn on a
   stream that says it is a terminal) and off, alternated, CPU seconds, and the ratio bar / no
   bar of each round's pair, median (min-max) (goal: the median within 5%). That an update's
   cost does not grow with the number of targets is a test (tests/processing/test_progress.py).

The machine's load average is printed before and after: on a shared machine, read the CPU
columns. Usage: python benchmarks/startup.py [--quick] [--rounds 7] [--compare-to DIR]
[--targets 2000] [--skip-make] [--skip-startup]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmark_support import load_average, ratio_spread, spread

REPO = Path(__file__).resolve().parents[1]


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_command(command: list[str], repo: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `command` run with `repo` first on the module path."""
    env = dict(os.environ, PYTHONPATH=str(repo))
    cpu, start = _child_cpu(), time.perf_counter()
    subprocess.run(command, env=env, cwd=tempfile.gettempdir(), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _child_cpu() - cpu


def commands() -> dict[str, list[str]]:
    """The commands timed, by label (``awl --version`` only when awl has the option)."""
    awl = [sys.executable, "-m", "awlineage.cli"]
    found = {"python -c pass": [sys.executable, "-c", "pass"],
             "import awlineage": [sys.executable, "-c", "import awlineage"],
             "awl --help": [*awl, "--help"]}
    probe = subprocess.run([*awl, "--version"], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=str(REPO)))
    if probe.returncode == 0:
        found["awl --version"] = [*awl, "--version"]
    return found


def startup(rounds: int, compare_to: Path | None) -> None:
    """Part 1: the whole commands, alternated, with this checkout and `compare_to`."""
    repos = {"this": REPO, **({"before": compare_to} if compare_to else {})}
    timed = commands()
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for label, command in timed.items():
            for name, repo in repos.items():
                wall, cpu = run_command(command, repo)
                walls.setdefault((label, name), []).append(wall)
                cpus.setdefault((label, name), []).append(cpu)
    goals = {"import awlineage": 0.5, "awl --help": 0.7}
    print(f"1. whole commands, {rounds} alternated rounds (median, min-max)")
    print(f"   {'command':18s} {'code':7s} {'wall':>26s} {'CPU':>26s}  goal")
    for (label, name), values in walls.items():
        goal = goals.get(label)
        verdict = "" if goal is None else (
            f"< {goal} s: {'met' if statistics.median(values) < goal else 'NOT met'} (wall)")
        print(f"   {label:18s} {name:7s} {spread(values, 3) + ' s':>26s} "
              f"{spread(cpus[label, name], 3) + ' s':>26s}  {verdict}")


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, so the bar redraws in place on it."""

    def isatty(self) -> bool:
        return True


def _cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def make_with_and_without_bar(targets: int, rounds: int) -> None:
    """Part 2: a make of `targets` trivial targets with the bar on a terminal and off."""
    sys.path.insert(0, str(REPO / "benchmarks" / "spark_targets"))
    from processor_models import BenchBusy, BenchWork

    from awlineage import TargetProcessor, commit, connect

    cpus: dict[str, list[float]] = {"bar": [], "no bar": []}
    with tempfile.TemporaryDirectory() as tmp:
        connect(f"sqlite:///{tmp}/warm.db", create=True)  # the first make pays for imports
        commit([BenchWork(seconds=0.0) for _ in range(10)])
        TargetProcessor("serial", progress=_Terminal()).make(BenchBusy)
        for index in range(rounds):
            for name in (("bar", "no bar") if index % 2 == 0 else ("no bar", "bar")):
                connect(f"sqlite:///{tmp}/{name.replace(' ', '_')}_{index}.db", create=True)
                commit([BenchWork(seconds=0.0) for _ in range(targets)])
                processor = TargetProcessor("serial", progress=_Terminal() if name == "bar"
                                            else False)
                cpus[name].append(_cpu(lambda p=processor: p.make(BenchBusy)))
    ratio = statistics.median(b / n for b, n in zip(cpus["bar"], cpus["no bar"], strict=True))
    print(f"2. make of {targets} trivial targets, {rounds} alternated rounds, CPU: "
          f"bar {spread(cpus['bar'], 3)} s, no bar {spread(cpus['no bar'], 3)} s: ratio bar / "
          f"no bar {ratio_spread(cpus['bar'], cpus['no bar'], 3)} (median (min-max) of the "
          f"rounds' ratios; goal: median within 1.05: {'met' if ratio <= 1.05 else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few rounds, small sizes")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--compare-to", type=Path, help="another checkout to alternate with")
    parser.add_argument("--targets", type=int, default=2000)
    parser.add_argument("--skip-make", action="store_true")
    parser.add_argument("--skip-startup", action="store_true",
                        help="part 2 only (run it with PYTHONPATH=DIR for another checkout)")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.targets = 3, 60
    print(load_average())
    if not args.skip_startup:
        startup(args.rounds, args.compare_to)
    if not args.skip_make:
        make_with_and_without_bar(args.targets, 4 if args.quick else 6)
    print(load_average())


if __name__ == "__main__":
    main()
