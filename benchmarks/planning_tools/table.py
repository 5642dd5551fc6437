"""The planning table: for each size, build the graph once per database and once as files,
then measure each tool in a child process of its own and print one row per tool and size,
then awlineage (PostgreSQL) against Snakemake and Luigi's full check."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


class Table:
    """Rows printed as they are measured, and the seconds kept for the ratios."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, int], float] = {}
        print(f"  | {'targets':>9} | {'tool':30} | {'seconds':>8} | {'us/target':>9} | "
              f"{'CPU s':>7} | {'peak MiB':>8} | notes", flush=True)
        print(f"  |{'-' * 11}|{'-' * 32}|{'-' * 10}|{'-' * 11}|{'-' * 9}|{'-' * 10}|------",
              flush=True)

    def row(self, tool: str, targets: int, seconds: float, cpu_seconds: float,
            peak_mib: float, notes: str = "") -> None:
        """One measured row: wall seconds (what the ratios use), the CPU seconds of the tool's
        own process (less disturbed by other work on the machine), peak memory."""
        self.seconds[(tool, targets)] = seconds
        print(f"  | {targets:>9,} | {LABELS[tool]:30} | {seconds:8.2f} | "
              f"{seconds / targets * 1e6:9.1f} | {cpu_seconds:7.2f} | {peak_mib:8.0f} | "
              f"{notes}", flush=True)

    def over(self, tool: str, targets: int, limit: float) -> None:
        print(f"  | {targets:>9,} | {LABELS[tool]:30} | {'> ' + str(int(limit)):>8} | "
              f"{'':9} | {'':7} | {'':8} | stopped after {limit:.0f} s; skipped at larger sizes",
              flush=True)


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


def _awlineage(kind: str, tools: list[str], frames: int, table: Table, *, postgres: str,
               repeat: int, batch: int, tmp: Path, keep: str | None) -> None:
    targets = targets_of(frames)
    with _database(kind, postgres, tmp, keep, frames) as (url, schema, built):
        schema_args = ["--schema", schema] if schema else []
        if built:
            print(f"  (reusing the {targets:,} targets kept in PostgreSQL schema {schema})",
                  flush=True)
        elif not _build(kind, url, schema_args, frames, batch):
            return
        if f"plan-{kind}" in tools:
            run = run_child(_python("planning_tools.awl_graph", "plan", url, "--repeat",
                                    str(repeat), *schema_args), env=child_env(), cwd=BENCHMARKS)
            if run.returncode:
                _failed(f"planning on {kind}", run)
            else:
                found = run.result
                table.row(f"plan-{kind}", found["targets"], found["seconds"],
                          found["cpu_seconds"], run.peak_mib,
                          (f"best of {repeat} after a first of {found['first_seconds']:.2f} s"
                           if repeat else "a single plan, its queries counted")
                          + f"; {found['queries']} queries")
        if f"make-{kind}" in tools:
            # awl finds BenchGroup by --import processor_models (MODELS is on PYTHONPATH); the
            # database comes from AWL_DATABASE_URL / AWL_DATABASE_SCHEMA as a user would set it
            run = run_child(_python("awlineage.cli", "make", "BenchGroup", "--dry-run",
                                    "--executor", "serial", "--colour", "never",
                                    "--import", "processor_models"),
                            env=child_env(AWL_DATABASE_URL=url, AWL_DATABASE_SCHEMA=schema),
                            cwd=tmp, log=tmp / "awl-make.out")
            if run.returncode:
                _failed(f"awl make --dry-run on {kind}", run)
            else:
                lines = len(run.stdout.splitlines())
                table.row(f"make-{kind}", targets, run.seconds, run.cpu_seconds, run.peak_mib,
                          f"whole command (start-up, imports, plan, {lines:,} lines printed)")


def _file_tools(tools: list[str], frames: int, table: Table, *, limit: float,
                snakemake: str | None, root: Path, skipped: set[str]) -> None:
    from planning_tools.files import write_files
    from planning_tools.snakemake_graph import write_snakefile

    targets = targets_of(frames)
    start = time.perf_counter()
    write_files(root, frames)
    write_snakefile(root, frames)
    print(f"  (files of {targets:,} targets and their raw inputs ready in "
          f"{time.perf_counter() - start:.1f} s)", flush=True)
    for tool in tools:
        if tool == "snakemake":
            executable = snakemake or shutil.which("snakemake")
            if executable is None:
                print("  snakemake not found: install it (pip install snakemake, best in a "
                      "virtual environment of its own) or pass --snakemake", flush=True)
                skipped.add(tool)
                continue
            command = [executable, "-n", "--cores", "1", "--snakefile", "Snakefile"]
            env = None
        else:
            command = _python("planning_tools.luigi_graph", tool.removeprefix("luigi-"),
                              str(root), str(frames))
            env = child_env()
        run = run_child(command, env=env, cwd=root if tool == "snakemake" else BENCHMARKS,
                        timeout=limit)
        if run.timed_out:
            table.over(tool, targets, limit)
            skipped.add(tool)
        elif run.returncode:
            _failed(tool, run)
        elif tool == "snakemake":
            if "Nothing to be done" not in run.stdout + run.stderr:
                print("  snakemake found work to do: the file graph is not up to date",
                      flush=True)
            table.row(tool, targets, run.seconds, run.cpu_seconds, run.peak_mib,
                      "whole command")
        elif tool == "luigi-full":
            table.row(tool, targets, run.result["seconds"], run.result["cpu_seconds"],
                      run.peak_mib,
                      f"{run.result['checked']:,} complete() calls, raw files included")
        else:
            table.row(tool, targets, run.result["seconds"], run.result["cpu_seconds"],
                      run.peak_mib, f"checks only the {run.result['targets']:,} groups")


def _ratios(table: Table, targets: int) -> None:
    ours = table.seconds.get(("plan-postgres", targets))
    if ours is None:
        return
    goal = GOALS.get(targets - targets % 10)
    if goal is not None:
        print(f"  goal at {targets:,} targets on PostgreSQL: under {goal:.0f} s; measured "
              f"{ours:.2f} s ({'met' if ours < goal else 'not met'})", flush=True)
    for tool, wanted in (("snakemake", 50), ("luigi-full", 10)):
        theirs = table.seconds.get((tool, targets))
        if theirs is not None:
            ratio = theirs / ours
            print(f"  {LABELS[tool]} / awlineage plan (PostgreSQL) at {targets:,}: {ratio:.1f}x "
                  f"(goal >= {wanted}x: {'met' if ratio >= wanted else 'not met'})",
                  flush=True)


def planning_table(sizes: list[int], tools: list[str], *, postgres: str, limit: float,
                   repeat: int | None, batch: int, snakemake: str | None,
                   workdir: str | None, keep: str | None = None) -> None:
    """Print the planning table for graphs of about `sizes` targets, for `tools`; Snakemake
    and Luigi stop after `limit` seconds and are then skipped at larger sizes; with `keep`,
    the PostgreSQL graphs stay in schemas named after it and are reused by later runs."""
    table = Table()
    skipped: set[str] = set()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        for size in sorted(sizes):
            frames = frames_for(size)
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"  ({targets_of(frames):,} targets; load average {load} on "
                  f"{os.cpu_count()} CPUs: other work on the machine slows every row)",
                  flush=True)
            times = repeat if repeat is not None else 3 if size <= 10_000 else \
                2 if size <= 100_000 else 1
            for kind in ("sqlite", "postgres"):
                if {f"plan-{kind}", f"make-{kind}"} & set(tools):
                    _awlineage(kind, tools, frames, table, postgres=postgres, repeat=times,
                               batch=batch, tmp=tmp, keep=keep)
            wanted = [t for t in TOOLS[4:] if t in tools and t not in skipped]
            for tool in sorted(set(TOOLS[4:]) & set(tools) & skipped):
                print(f"  ({LABELS[tool]} skipped at {targets_of(frames):,} targets: it took "
                      f"over {limit:.0f} s at a smaller size)", flush=True)
            if wanted:
                root = Path(workdir) / f"graph-{frames}" if workdir else tmp / f"g{frames}"
                _file_tools(wanted, frames, table, limit=limit, snakemake=snakemake,
                            root=root, skipped=skipped)
                if not workdir:
                    shutil.rmtree(root, ignore_errors=True)
            _ratios(table, targets_of(frames))
