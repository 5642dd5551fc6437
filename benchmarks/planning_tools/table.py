"""The planning table: for each size, build the graph once per database and once as files,
then run each tool's whole command in a child process of its own, alternated, and print one
row per tool and size (median and spread), awlineage's warm in-process ``plan()`` as a second,
labelled row, then whole commands against whole commands: ``awl make --dry-run`` against
``snakemake -n`` and against Luigi's full check."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from planning_tools.child import ChildRun, run_child
from planning_tools.shape import GROUP, frames_for, targets_of

BENCHMARKS = Path(__file__).resolve().parent.parent
REPO = BENCHMARKS.parent
MODELS = BENCHMARKS / "spark_targets"

TOOLS = ("plan-sqlite", "plan-postgres", "make-sqlite", "make-postgres", "snakemake",
         "luigi-full", "luigi-build")
"""Rows of the table, in order: awlineage's plan and ``awl make --dry-run`` on each database,
``snakemake -n``, Luigi's full dependency check and ``luigi.build``."""

LABELS = {
    "plan-sqlite": "awlineage plan, SQLite",
    "plan-postgres": "awlineage plan, PostgreSQL",
    "make-sqlite": "awl make --dry-run, SQLite",
    "make-postgres": "awl make --dry-run, PostgreSQL",
    "snakemake": "snakemake -n",
    "luigi-full": "Luigi, full check",
    "luigi-build": "luigi.build (stops at top)",
}

GOALS = {100_000: 1.0, 1_000_000: 10.0}
"""Seconds within which awlineage must plan that many targets on PostgreSQL (issue 16)."""


def child_env(**extra: str | None) -> dict[str, str]:
    """The environment of a child: this repository and the benchmark models importable (the
    repository first, so that a worktree's awlineage is the one imported), plus `extra`
    (a None value removes the variable)."""
    env = dict(os.environ)
    paths = [str(REPO), str(MODELS), str(BENCHMARKS)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _python(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def _failed(what: str, run: ChildRun) -> None:
    tail = (run.stderr.strip().splitlines() or run.stdout.strip().splitlines() or ["?"])[-1]
    print(f"  {what} failed (exit {run.returncode}): {tail}", flush=True)


def median(values: list[float]) -> float:
    """The median of `values` (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class Table:
    """Rows printed as they are measured, and the seconds of each run kept for the ratios."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, int], list[float]] = {}
        self._header()

    @staticmethod
    def _header() -> None:
        print(f"  | {'targets':>9} | {'tool':30} | {'median s':>8} | {'spread s':>13} | "
              f"{'us/target':>9} | {'CPU s':>7} | {'peak MiB':>8} | notes", flush=True)
        print(f"  |{'-' * 11}|{'-' * 32}|{'-' * 10}|{'-' * 15}|{'-' * 11}|{'-' * 9}|"
              f"{'-' * 10}|------", flush=True)

    def row(self, tool: str, targets: int, seconds: list[float], cpu_seconds: list[float],
            peak_mib: float, notes: str = "") -> None:
        """One measured row: the wall seconds of each run (the ratios use them), their median
        and spread (min-max), the median CPU seconds of the tool's own process (less disturbed
        by other work on the machine), peak memory."""
        self.seconds[(tool, targets)] = seconds
        wall = median(seconds)
        spread = f"{min(seconds):.2f}-{max(seconds):.2f}" if len(seconds) > 1 else "1 run"
        print(f"  | {targets:>9,} | {LABELS[tool]:30} | {wall:8.2f} | {spread:>13} | "
              f"{wall / targets * 1e6:9.1f} | {median(cpu_seconds):7.2f} | {peak_mib:8.0f} | "
              f"{notes}", flush=True)

    def over(self, tool: str, targets: int, limit: float) -> None:
        print(f"  | {targets:>9,} | {LABELS[tool]:30} | {'> ' + str(int(limit)):>8} | "
              f"{'':13} | {'':9} | {'':7} | {'':8} | stopped after {limit:.0f} s; skipped at "
              "larger sizes", flush=True)


@contextmanager
def _database(kind: str, postgres: str, tmp: Path, keep: str | None, frames: int
              ) -> Iterator[tuple[str, str | None, bool]]:
    """(URL, schema, whether the graph is built there already) of a database for a graph of
    `frames` frames: SQLite in `tmp`, a throw-away PostgreSQL schema, or with `keep` the kept
    PostgreSQL schema ``{keep}_{frames}`` (built the first time, reused after)."""
    if kind == "sqlite":
        path = tmp / "plan.db"
        path.unlink(missing_ok=True)
        yield f"sqlite:///{path}", None, False
        path.unlink(missing_ok=True)
    elif keep:
        schema = f"{keep}_{frames}"
        yield postgres, schema, _kept_schema(postgres, schema, frames)
    else:
        from benchmark_support import postgres_schema

        with postgres_schema(postgres) as schema:
            yield postgres, schema, False


def _kept_schema(url: str, schema: str, frames: int) -> bool:
    """Whether `schema` holds a whole graph of `frames` frames (every group stored: the build
    commits them last); if not, it is emptied (created if need be) for a build."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            exists = conn.execute(sa.text(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = :schema AND "
                "table_name = 'processor_models_benchgroup'"), {"schema": schema}).scalar()
            if exists and conn.exec_driver_sql(
                    f'SELECT count(*) FROM "{schema}".processor_models_benchgroup'
                    ).scalar() == frames // GROUP:
                return True
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        return False
    finally:
        engine.dispose()


def _build(kind: str, url: str, schema_args: list[str], frames: int, batch: int) -> bool:
    """Build the stored graph of `frames` frames in a child process; False if that failed."""
    targets = targets_of(frames)
    build = run_child(_python("planning_tools.awl_graph", "build", url, "--frames",
                              str(frames), "--batch", str(batch), *schema_args),
                      env=child_env(), cwd=BENCHMARKS)
    if build.returncode:
        _failed(f"building the {kind} graph", build)
        return False
    spent = build.result
    print(f"  (built {targets:,} targets on {kind} in {build.seconds:.1f} s, "
          f"{build.seconds / targets * 1e6:.0f} us per target: make() {spent['make']:.1f} s, "
          f"commit {spent['commit']:.1f} s, the rest start-up and creating objects; peak "
          f"{build.peak_mib:.0f} MiB; batches of {batch:,} frames)", flush=True)
    return True


@dataclass
class Command:
    """One tool run as a whole command: what to run, where, with which environment."""

    tool: str
    argv: list[str]
    cwd: Path
    env: dict[str, str] | None = None
    log: Path | None = None
    runs: list[ChildRun] = field(default_factory=list)


def _stored_graph(stack: ExitStack, kind: str, frames: int, *, postgres: str, batch: int,
                  tmp: Path, keep: str | None) -> tuple[str, str | None] | None:
    """(URL, schema) of a database holding the graph of `frames` frames, built if need be and
    kept open on `stack`; None if building failed."""
    url, schema, built = stack.enter_context(_database(kind, postgres, tmp, keep, frames))
    schema_args = ["--schema", schema] if schema else []
    if built:
        print(f"  (reusing the {targets_of(frames):,} targets kept in PostgreSQL schema "
              f"{schema})", flush=True)
    elif not _build(kind, url, schema_args, frames, batch):
        return None
    return url, schema


def _warm_plan(kind: str, url: str, schema: str | None, targets: int, table: Table,
               repeat: int) -> None:
    """The second, labelled row: ``plan()`` warm and in-process, best of `repeat`."""
    schema_args = ["--schema", schema] if schema else []
    run = run_child(_python("planning_tools.awl_graph", "plan", url, "--repeat", str(repeat),
                            *schema_args), env=child_env(), cwd=BENCHMARKS)
    if run.returncode:
        _failed(f"planning on {kind}", run)
        return
    found = run.result
    table.row(f"plan-{kind}", found["targets"], [found["seconds"]], [found["cpu_seconds"]],
              run.peak_mib,
              (f"warm, in-process: best of {repeat} after a first of "
               f"{found['first_seconds']:.2f} s" if repeat
               else "in-process: a single plan, its queries counted")
              + f"; {found['queries']} queries")


def _commands(tools: list[str], frames: int, databases: dict[str, tuple[str, str | None]],
              tmp: Path, root: Path | None, snakemake: str | None) -> list[Command]:
    """The whole commands of `tools` on the graph of `frames` frames."""
    commands = []
    for kind, (url, schema) in databases.items():
        if f"make-{kind}" in tools:
            # awl finds BenchGroup by --import processor_models (MODELS is on PYTHONPATH); the
            # database comes from AWL_DATABASE_URL / AWL_DATABASE_SCHEMA as a user would set it
            commands.append(Command(
                f"make-{kind}", _python("awlineage.cli", "make", "BenchGroup", "--dry-run",
                                        "--executor", "serial", "--colour", "never",
                                        "--import", "processor_models"),
                tmp, child_env(AWL_DATABASE_URL=url, AWL_DATABASE_SCHEMA=schema),
                tmp / f"awl-make-{kind}.out"))
    if root is None:
        return commands
    for tool in tools:
        if tool == "snakemake":
            executable = snakemake or shutil.which("snakemake")
            if executable is None:
                print("  snakemake not found: install it (pip install snakemake, best in a "
                      "virtual environment of its own) or pass --snakemake", flush=True)
                continue
            commands.append(Command(tool, [executable, "-n", "--cores", "1", "--snakefile",
                                           "Snakefile"], root))
        elif tool.startswith("luigi-"):
            commands.append(Command(tool, _python("planning_tools.luigi_graph",
                                                  tool.removeprefix("luigi-"), str(root),
                                                  str(frames)), BENCHMARKS, child_env()))
    return commands


def _alternate(commands: list[Command], runs: int, limit: float, table: Table,
               targets: int, skipped: set[str]) -> None:
    """Run every command `runs` times, one of each in turn (so that a change of load on the
    machine falls on every tool alike), then print one row per command."""
    live = list(commands)
    for _ in range(runs):
        for command in list(live):
            run = run_child(command.argv, env=command.env, cwd=command.cwd, timeout=limit,
                            log=command.log)
            if run.timed_out:
                table.over(command.tool, targets, limit)
                skipped.add(command.tool)
                live.remove(command)
            elif run.returncode:
                _failed(command.tool, run)
                live.remove(command)
            else:
                command.runs.append(run)
    for command in live:
        runs_done = command.runs
        last = runs_done[-1]
        notes = f"whole command, {len(runs_done)} alternated runs"
        if command.tool.startswith("make-"):
            notes += f" ({len(last.stdout.splitlines()):,} lines printed)"
        elif command.tool == "snakemake" and "Nothing to be done" not in last.stdout + last.stderr:
            notes += "; snakemake found work to do: the file graph is not up to date"
        elif command.tool == "luigi-full":
            notes += f" ({last.result['checked']:,} complete() calls, raw files included)"
        elif command.tool == "luigi-build":
            notes += f" (checks only the {last.result['targets']:,} groups)"
        table.row(command.tool, targets, [r.seconds for r in runs_done],
                  [r.cpu_seconds for r in runs_done], max(r.peak_mib for r in runs_done), notes)


def _ratios(table: Table, targets: int) -> None:
    """Whole command against whole command: the median of the per-round ratios (each round
    runs both commands back to back) and their spread."""
    goal = GOALS.get(targets - targets % 10)
    ours = table.seconds.get(("make-postgres", targets))
    if goal is not None and ours is not None:
        wall = median(ours)
        print(f"  goal at {targets:,} targets on PostgreSQL: under {goal:.0f} s; measured "
              f"{wall:.2f} s for the whole `awl make --dry-run` "
              f"({'met' if wall < goal else 'not met'})", flush=True)
    for kind in ("postgres", "sqlite"):
        ours = table.seconds.get((f"make-{kind}", targets))
        if ours is None:
            continue
        for tool, wanted in (("snakemake", 50), ("luigi-full", 10)):
            theirs = table.seconds.get((tool, targets))
            if theirs is None:
                continue
            ratios = [t / o for t, o in zip(theirs, ours, strict=False)]
            spread = (f", spread {min(ratios):.1f}-{max(ratios):.1f}x over {len(ratios)} rounds"
                      if len(ratios) > 1 else ", 1 round")
            ratio = median(ratios)
            print(f"  {LABELS[tool]} / {LABELS[f'make-{kind}']} at {targets:,} (whole commands):"
                  f" {ratio:.1f}x{spread} (goal >= {wanted}x: "
                  f"{'met' if ratio >= wanted else 'not met'})", flush=True)


def planning_table(sizes: list[int], tools: list[str], *, postgres: str, limit: float,
                   repeat: int | None, batch: int, snakemake: str | None,
                   workdir: str | None, keep: str | None = None, runs: int | None = None
                   ) -> None:
    """Print the planning table for graphs of about `sizes` targets, for `tools`: the whole
    commands (``awl make --dry-run``, ``snakemake -n``, the Luigi scripts) alternated `runs`
    times (default 5 up to 10k targets, 3 up to 100k, else 1) with their median and spread,
    then awlineage's warm in-process ``plan()`` (best of `repeat`) as labelled second rows,
    then the ratios of whole commands. Snakemake and Luigi stop after `limit` seconds and are
    then skipped at larger sizes; with `keep`, the PostgreSQL graphs stay in schemas named
    after it and are reused by later runs."""
    table = Table()
    skipped: set[str] = set()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        for size in sorted(sizes):
            frames = frames_for(size)
            targets = targets_of(frames)
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"  ({targets:,} targets; load average {load} on "
                  f"{os.cpu_count()} CPUs: other work on the machine slows every row)",
                  flush=True)
            times = repeat if repeat is not None else 3 if size <= 10_000 else \
                2 if size <= 100_000 else 1
            rounds = runs if runs is not None else 5 if size <= 10_000 else \
                3 if size <= 100_000 else 1
            for tool in sorted(set(TOOLS[4:]) & set(tools) & skipped):
                print(f"  ({LABELS[tool]} skipped at {targets:,} targets: it took "
                      f"over {limit:.0f} s at a smaller size)", flush=True)
            with ExitStack() as stack:
                databases = {}
                for kind in ("sqlite", "postgres"):
                    if {f"plan-{kind}", f"make-{kind}"} & set(tools):
                        found = _stored_graph(stack, kind, frames, postgres=postgres,
                                              batch=batch, tmp=tmp, keep=keep)
                        if found is not None:
                            databases[kind] = found
                wanted = [t for t in TOOLS[4:] if t in tools and t not in skipped]
                root = None
                if wanted:
                    root = Path(workdir) / f"graph-{frames}" if workdir else tmp / f"g{frames}"
                    _write_files(root, frames)
                    if not workdir:
                        stack.callback(shutil.rmtree, root, ignore_errors=True)
                _alternate(_commands(wanted + [t for t in tools if t.startswith("make-")],
                                     frames, databases, tmp, root, snakemake),
                           rounds, limit, table, targets, skipped)
                for kind, (url, schema) in databases.items():
                    if f"plan-{kind}" in tools:
                        _warm_plan(kind, url, schema, targets, table, times)
            _ratios(table, targets)


def _write_files(root: Path, frames: int) -> None:
    """The file graph of Snakemake and Luigi, every output present."""
    from planning_tools.files import write_files
    from planning_tools.snakemake_graph import write_snakefile

    start = time.perf_counter()
    write_files(root, frames)
    write_snakefile(root, frames)
    print(f"  (files of {targets_of(frames):,} targets and their raw inputs ready in "
          f"{time.perf_counter() - start:.1f} s)", flush=True)
