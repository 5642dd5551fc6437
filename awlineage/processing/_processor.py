"""`TargetProcessor`: ask for a result and it is pulled. Plan by backward chaining, show the
decisions, then make only what is red, each target as soon as its dependencies are made."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TextIO

from awlineage.database import Database, current_database, find_or_commit
from awlineage.errors import ConfigurationError
from awlineage.persistence import DBObject, Expression, qualified_name
from awlineage.processing._claims import DEFAULT_TIMEOUT, TargetClaims, clear_leftover_claims
from awlineage.processing._executors import Executor, SerialExecutor, resolve_executor
from awlineage.processing._frozen_heap import older_objects_frozen
from awlineage.processing._given_parameters import as_parameters
from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._plan import Plan, PlanNode, State
from awlineage.processing._planner import Planner
from awlineage.processing._progress import ProgressBar, skipped_causes, summary_table
from awlineage.processing._render import render_causes, render_plan
from awlineage.processing._scheduler import Outcome, Scheduler
from awlineage.processing._spark import (
    SparkExecutor,
    check_cluster_settings,
    module_roots,
    require_spark,
)
from awlineage.processing._spark_policy import SparkWhenItPays, typical_seconds
from awlineage.processing._task import FAILED, MADE, Settings, TaskResult
from awlineage.retraction import Retraction, retractions_of
from awlineage.storage import Session, current_session


@dataclass
class ProcessingReport:
    """What a `TargetProcessor.make` did."""

    plan: Plan
    outcome: Outcome | None
    """None for a dry run."""
    database: Database
    note: str = ""
    """Where the targets were made and why, when the processor chose (Spark or here)."""

    @cached_property
    def objects(self) -> list[DBObject]:
        """The targets asked for, as they are now (made, or reused): loaded when first
        asked for."""
        ids = self.plan.selected_result_ids()
        found = self.database.get_many(ids) if ids else {}
        return [found[i] for i in ids if i in found]

    def count(self, status: TargetOutcome | str) -> int:
        """How many targets ended `status` (a `TargetOutcome` or its value: ``made``,
        ``reused``, ``failed``, ``skipped``, ``blocked``); ``reused`` counts the green targets
        too.

        Raises
        ------
        ValueError
            `status` is no `TargetOutcome`, naming the ones there are.
        """
        outcome = _outcome(status)
        if outcome is TargetOutcome.BLOCKED:
            return self.plan.count(State.BLOCKED)
        if outcome is TargetOutcome.REUSED:
            green = self.plan.count(State.GREEN) + self.plan.count(State.ORANGE)
            return green + (self.outcome.count(outcome) if self.outcome else 0)
        return self.outcome.count(outcome) if self.outcome else 0

    @property
    def made(self) -> int:
        """How many targets were made."""
        return self.count(MADE)

    @property
    def made_locally(self) -> int:
        """How many of them were made in this process while Spark was starting."""
        return self.outcome.local if self.outcome else 0

    @property
    def reused(self) -> int:
        """How many targets were reused."""
        return self.count(TargetOutcome.REUSED)

    def failures(self) -> list[tuple[PlanNode, TaskResult]]:
        """The nodes whose make failed, with the task's result (error and traceback)."""
        if self.outcome is None:
            return []
        by_id = {id(n): n for n in self.plan.nodes}
        return [(by_id[key], result) for key, result in self.outcome.results.items()
                if result.status == FAILED]

    def warned(self) -> list[tuple[PlanNode, TaskResult]]:
        """The nodes whose makes recorded warnings on their runs, with the task's result
        (``warnings``: how many; ``warned_run``: the first run that recorded one)."""
        if self.outcome is None:
            return []
        by_id = {id(n): n for n in self.plan.nodes}
        return [(by_id[key], result) for key, result in self.outcome.results.items()
                if result.warnings]

    def summary(self) -> str:
        """The table of targets per class and what happened to them."""
        return summary_table(self.plan, self.outcome)

    def tree(self, colour: bool = False, max_roots: int | None = None) -> str:
        """The plan's coloured tree with reasons (of the first `max_roots` targets asked for,
        if given)."""
        return render_plan(self.plan, colour=colour, max_roots=max_roots)


def _outcome(status: TargetOutcome | str) -> TargetOutcome:
    try:
        return TargetOutcome(status)
    except ValueError:
        raise ValueError(f"no target outcome {status!r}: one of "
                         f"{', '.join(o.value for o in TargetOutcome)}") from None


class TargetProcessor:
    """Pulls targets: reuses what is up to date, makes what is missing or out of date.

    Parameters
    ----------
    executor : str or Executor, optional
        ``"auto"`` (default: ``"spark"`` when pyspark is installed, the ``spark`` extra,
        else ``"serial"``), ``"spark"`` (Spark, local mode unless `spark_master` names a
        cluster), ``"serial"`` (this process, one at a time), or an executor object.
    database : Database or None, optional
        The database; the current session's by default. Given, the processor works in a
        session on it with the current data server.
    session : Session or None, optional
        The `Session` (database and data server) to work in; every make() runs in it, so
        its queries, default parameters and files use it too. Default: the current one.
    spark_master : str or None, optional
        A Spark master URL (``local[2]``, ``spark://host:7077``).
    parameters : DBObject or tuple of DBObject, optional
        Parameters objects to use instead of the defaults in code: one per parameters class,
        each of the parameters class of some process class (`plan` and `make` refuse others,
        which every make would ignore); those of classes a make does not take are left for
        other makes.
    keep_going : bool, optional
        After a failure, go on making what does not depend on it.
    progress : TextIO or bool, optional
        A stream for the progress bar (stderr by default); False for none.
    claim_timeout : float, optional
        Seconds after which a crashed processor's claim on a target is taken over.

    Raises
    ------
    ValueError
        When `executor` names no executor.
    ParametersError
        When `parameters` holds a class, something not a persistent object, or two objects
        of one class; from `plan` and `make`, when one is of the parameters class of no
        process class.
    MissingExtraError
        From `make`, when the Spark executor is asked for by name and pyspark or Java is not
        installed.
    ConfigurationError
        From `make`, when the Spark executor cannot run the targets (their classes are
        defined in the script itself).
    QuerySyntaxError
        From `make` and `plan`, when the textual `where` condition does not parse.
    UnknownAttributeError
        From `make` and `plan`, when `where` names an attribute the class does not have.

    Examples
    --------
    >>> from awlineage import DBObject, OnePer, Process, commit, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocProcessorRaw(DBObject):
    ...     chip = persistent("CCD name", str, "")
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocProcessorReduced(Process):
    ...     targets = OnePer(DocProcessorRaw, link="raw", copy=("chip",))
    ...     raw = persistent("The raw frame reduced", DocProcessorRaw, None)
    ...     chip = persistent("CCD name", str, "")
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> commit([DocProcessorRaw(chip="ccd50", level=130.0),
    ...         DocProcessorRaw(chip="ccd51", level=120.0)])
    >>> processor = TargetProcessor("serial", progress=False)
    >>> report = processor.make(DocProcessorReduced, "chip == 'ccd50'")
    >>> print(report.summary())
    class                   made   reused   failed  skipped  blocked
    DocProcessorReduced        1        0        0        0        0
    total                      1        0        0        0        0
    >>> report = processor.make(DocProcessorReduced)
    >>> report.made, report.reused
    (1, 1)
    >>> sorted(target.value for target in report.objects)
    [20.0, 30.0]
    """

    def __init__(self, executor: str | Executor = "auto", *, database: Database | None = None,
                 session: Session | None = None, spark_master: str | None = None,
                 parameters: DBObject | Iterable[DBObject] = (), keep_going: bool = False,
                 progress: TextIO | bool = True,
                 claim_timeout: float = DEFAULT_TIMEOUT) -> None:
        if session is None:  # bound to the database current now, as self.db is
            session = current_session(database or current_database())
        elif database is not None:
            session = session.with_database(database)
        self.session = session
        self.db = session.database
        self.executor = resolve_executor(executor) if isinstance(executor, str) else executor
        """The executor: ``"spark"``, ``"serial"`` (``"auto"`` resolved) or an object."""
        self.spark_master = spark_master
        if self.executor == "spark" and spark_master and not spark_master.startswith("local"):
            # before anything is made here: tasks on other hosts need a shared database and
            # data server (this process makes targets itself while Spark starts)
            check_cluster_settings(spark_master, Settings(
                self.db.url.render_as_string(hide_password=False), self.db.schema,
                session.data_url))
        self.parameters = as_parameters(parameters)
        """The parameters objects given, checked (one per parameters class)."""
        self.keep_going = keep_going
        self.progress = progress
        self.claim_timeout = claim_timeout
        self._starting: SparkExecutor | None = None

    # -- planning -------------------------------------------------------------------------
    def plan(self, cls: type | str, where: Expression | str | None = None, *, force: bool = False,
             force_upstream: bool = False,
             retracted: bool | int | Retraction | None = None) -> Plan:
        """The plan for the targets of `cls` meeting `where`: nothing is made.

        Parameters
        ----------
        cls : type or str
            The process class whose targets are wanted, or its name (qualified, or short
            when one class has it), as ``awl make`` takes it.
        where : Expression or str or None, optional
            A condition on the targets' attributes (text or expression); None for all.
        force : bool, optional
            Make the selected targets even when up to date.
        force_upstream : bool, optional
            Make everything they depend on, too.
        retracted : bool or int or Retraction or None, optional
            Only the targets that retractions make red or block: True for any retraction; a
            `Retraction`, its id, or the id of a retracted object for that one. None (the
            default) for every target.

        Returns
        -------
        Plan
            Every target and what it depends on, each green (reuse), red (make) or blocked,
            with its reasons.

        Raises
        ------
        QuerySyntaxError
            When the textual `where` does not parse.
        UnknownAttributeError
            When `where` names an attribute `cls` does not have.
        """
        planner = Planner(self.db, self.parameters)
        with self.session:
            return planner.plan(cls, where, force=force, force_upstream=force_upstream,
                                retracted=retracted)

    # -- making ---------------------------------------------------------------------------
    def make(self, cls: type | str, where: Expression | str | None = None, *, force: bool = False,
             force_upstream: bool = False, dry_run: bool = False,
             retracted: bool | int | Retraction | None = None) -> ProcessingReport:
        """Plan, then make every red target (unless `dry_run`); see `ProcessingReport`.

        Parameters
        ----------
        cls : type or str
            The process class whose targets are wanted, or its name (qualified, or short
            when one class has it), as ``awl make`` takes it.
        where : Expression or str or None, optional
            A condition on the targets' attributes (text or expression); None for all.
        force : bool, optional
            Make the selected targets even when up to date.
        force_upstream : bool, optional
            Make everything they depend on, too.
        dry_run : bool, optional
            Only plan: the report's plan says what would be made, and nothing is.
        retracted : bool or int or Retraction or None, optional
            Make only the targets that retractions make red (True: any retraction; a
            `Retraction`, its id, or the id of a retracted object: that one), with what they
            need; every other target is left as it is. None (the default): every target.

        Returns
        -------
        ProcessingReport
            The plan, what happened to each target, and the targets asked for (``objects``).

        Raises
        ------
        QuerySyntaxError
            When the textual `where` does not parse.
        UnknownAttributeError
            When `where` names an attribute `cls` does not have.
        MissingExtraError
            When the Spark executor was asked for by name and pyspark or Java is missing.
        ConfigurationError
            When the Spark executor cannot run the targets.

        Notes
        -----
        While it runs, the objects the process held before are frozen for Python's cycle
        collector (`gc.freeze`, see `awlineage.processing._frozen_heap`), unless something
        is frozen already.
        """
        with self.session, older_objects_frozen():
            return self._make(cls, where, force, force_upstream, dry_run, retracted)

    def start(self, cls: type) -> None:
        """Start the executor now, for a `make` of `cls` to come.

        On a cluster master, Spark starts in the background and its workers import `cls`'s
        module and connect, while this process goes on (ingests, plans); the make uses that
        executor. Nothing to do for the serial executor, one given ready-made, or Spark in
        local mode: the make starts it once the work left is worth its start
        (`SparkWhenItPays`).

        Parameters
        ----------
        cls : type
            The process class that will be made.
        """
        if self._starting is None and not self._local_spark:
            self._starting = self._start_spark(cls)

    def _make(self, cls: type | str, where: Expression | str | None, force: bool,
              force_upstream: bool, dry_run: bool,
              retracted: bool | int | Retraction | None = None) -> ProcessingReport:
        starting = None
        cls = Planner(self.db).target_class(cls)
        if not dry_run and self._local_spark:
            require_spark(imported=False)  # a missing extra is said before planning, as before
        if not dry_run:
            starting = self._starting or (None if self._local_spark else self._start_spark(cls))
            self._starting = None
        plan = self.plan(cls, where, force=force, force_upstream=force_upstream,
                         retracted=retracted)
        if not dry_run:
            clear_leftover_claims(self.db, self.claim_timeout)
        if dry_run or not plan.red():
            return ProcessingReport(plan, None if dry_run else Outcome(), self.db)
        self._commit_parameters(plan)
        executor = self._executor(plan, starting)
        outcome = self._run(plan, executor)
        note = executor.note() if isinstance(executor, SparkWhenItPays) else ""
        return ProcessingReport(plan, outcome, self.db, note)

    def _run(self, plan: Plan, executor: Executor) -> Outcome:
        """Run the red nodes of `plan` on `executor` (Spark's targets in this process while
        it starts), with claims and the progress bar; close an executor made here."""
        claims = TargetClaims(self.db, self.claim_timeout)
        bar = self._progress_bar(len(plan.red()))
        scheduler = Scheduler(
            executor, self.settings(plan), keep_going=self.keep_going, claims=claims,
            on_event=bar.update if bar else None,
            local=executor.local if isinstance(executor, SparkWhenItPays) else
            SerialExecutor(self.session) if isinstance(executor, SparkExecutor) else None)
        try:
            return scheduler.run(plan)
        finally:
            claims.close()
            if bar:
                bar.close()
            if isinstance(self.executor, str):
                executor.close()

    def settings(self, plan: Plan) -> Settings:
        """Where the tasks of `plan` find the database and data server.

        Parameters
        ----------
        plan : Plan
            The plan whose tasks will run.

        Returns
        -------
        Settings
            Database URL and schema, data server URL, and the module roots to import.
        """
        roots = module_roots(sorted({n.cls for n in plan.nodes}, key=lambda c: c.__name__))
        return Settings(self.db.url.render_as_string(hide_password=False), self.db.schema,
                        self.session.data_url, roots)

    @property
    def _local_spark(self) -> bool:
        """Whether the executor is Spark in local mode (started when it pays)."""
        return self.executor == "spark" and (self.spark_master or "local").startswith("local")

    def _start_spark(self, *classes: type) -> SparkExecutor | None:
        """Start Spark in the background (while the plan is made, or while targets are made
        here) and have its workers import the modules of `classes` and connect as soon as it
        is up; it is left running after the make."""
        modules = tuple(dict.fromkeys(c.__module__ for c in classes))
        if self.executor != "spark" or "__main__" in modules:
            return None
        roots = module_roots(list(classes))
        executor = SparkExecutor(self.spark_master, python_path=roots, background=True,
                                 preload=modules)
        executor.warm_up(Settings(self.db.url.render_as_string(hide_password=False),
                                  self.db.schema, self.session.data_url, roots), modules)
        return executor

    def _executor(self, plan: Plan, starting: SparkExecutor | None = None) -> Executor:
        if not isinstance(self.executor, str):
            return self.executor
        if self.executor == "serial":
            return SerialExecutor(self.session, keep_going=self.keep_going)
        if self.executor == "spark":
            classes = sorted({n.cls for n in plan.red()}, key=lambda c: c.__name__)
            scripted = [c.__name__ for c in classes if c.__module__ == "__main__"]
            if scripted:
                raise ConfigurationError(
                    f"{', '.join(scripted)} defined in the script itself cannot be loaded by "
                    "Spark's workers: define process targets in a module and import it, or "
                    "use the serial executor")
            if starting is not None:  # the tasks put the classes' roots on their module path
                return starting
            if self._local_spark:  # started once the work left is worth it
                require_spark(imported=False)
                red = [qualified_name(n.cls) for n in plan.red()]
                return SparkWhenItPays(lambda: self._start_spark(*classes), red,
                                       typical_seconds(self.db, classes),
                                       SerialExecutor(self.session))
            return SparkExecutor(self.spark_master, python_path=module_roots(classes))
        raise ValueError(f"unknown executor {self.executor!r}")  # resolve_executor refused it

    def _progress_bar(self, total: int) -> ProgressBar | None:
        if self.progress is False:
            return None
        return ProgressBar(total, None if self.progress is True else self.progress)

    def _commit_parameters(self, plan: Plan) -> None:
        """Parameters objects of targets to make are stored first, so tasks can link them.
        One equal to a stored one (stored by another processor since the plan was made) is
        replaced by it: processors started together store each parameters object once. A
        retracted twin is not: the targets would be made with a retracted object (and be red
        again at once), so the new object is stored itself."""
        stored: dict[int, DBObject] = {}
        for node in plan.red():
            params = node.obj.__dict__.get("process_params")
            if params is None or params.is_committed:
                continue
            if id(params) not in stored:
                found = find_or_commit(self.db, params)
                if found is not params and retractions_of([found], database=self.db,
                                                          whole_only=True):
                    self.db.commit([params])
                    found = params
                stored[id(params)] = found
            node.obj.process_params = stored[id(params)]


MAX_ROOTS_SHOWN = 25
"""``awl make`` draws the trees of this many targets asked for; the summary counts them all."""


def print_report(report: ProcessingReport, out: TextIO = sys.stdout, colour: bool = False
                 ) -> None:
    """The tree, the summary table and the errors of failed makes, as ``awl make`` prints.

    Parameters
    ----------
    report : ProcessingReport
        What a processor run did.
    out : TextIO, default sys.stdout
        Where to print.
    colour : bool, default False
        Whether to colour the tree with terminal escape codes.
    """
    tree = report.tree(colour, max_roots=MAX_ROOTS_SHOWN)
    if tree:
        print(tree, file=out)
    causes = render_causes(report.plan)
    if report.plan.red() or report.plan.blocked_causes():
        print(f"\nwhy:\n{causes}\n", file=out)
    else:  # "nothing to make: ...": no reason to give, so no header over it
        print(f"\n{causes}\n" if tree else f"{causes}\n", file=out)
    print(report.summary(), file=out)
    if report.outcome is not None:
        skipped = skipped_causes(report.plan, report.outcome)
        if skipped:
            print("skipped:", file=out)
            for (name, reason), count in skipped.items():
                print(f"{count:5d} {name}: {reason}", file=out)
    if report.note:
        print(f"({report.note})", file=out)
    elif report.made_locally:
        print(f"({report.made_locally} made in this process while Spark was starting)",
              file=out)
    for node, result in report.failures():
        print(f"\nfailed: {node.cls.__name__} ({node.identity_text()}): {result.error}",
              file=out)
    warning_line = _warnings_line(report)
    if warning_line:
        print(f"\n{warning_line}", file=out)


def _warnings_line(report: ProcessingReport) -> str:
    """One line counting the warnings the makes recorded on their runs, and where to read
    them; empty when there were none.

    Parameters
    ----------
    report : ProcessingReport
        What a processor run did.

    Returns
    -------
    str
        For example ``3 targets recorded 7 warnings on their runs: awl trace 1234 shows
        the first's (and the viewer's run page, /run/1234)``.
    """
    warned = report.warned()
    if not warned:
        return ""
    total = sum(result.warnings for _, result in warned)
    first = warned[0][1].warned_run
    who = "1 target" if len(warned) == 1 else f"{len(warned)} targets"
    what = "1 warning" if total == 1 else f"{total:,} warnings"
    whose = "its run: awl trace {0} shows them" if len(warned) == 1 else \
        "their runs: awl trace {0} shows the first's"
    return (f"{who} recorded {what} on {whose.format(first)} "
            f"(and the viewer's run page, /run/{first})")


__all__ = ["ProcessingReport", "TargetProcessor", "print_report"]

