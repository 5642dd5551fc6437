"""ProcessRun: the record written around every make(): who, where, when, with which code and
parameters, what was read and made, how it ended, and the call trace."""

from __future__ import annotations

import datetime
import enum
import json
from typing import Any

from awlineage.persistence import DBObject, Kind, Property, persistent


class RunStatus(enum.StrEnum):
    """How a process run (one call of a target's ``make()``) ended.

    Members are strings and are stored as their values, so runs stored before this enum
    existed read back as members, and ``ProcessRun.status == "failed"`` still selects.

    Attributes
    ----------
    SUCCEEDED
        The make returned normally; the run is committed with its target.
    FAILED
        The make raised; the run is committed on its own, with the error and traceback.

    Examples
    --------
    >>> from awlineage import RunStatus
    >>> RunStatus("failed") is RunStatus.FAILED, RunStatus.SUCCEEDED == "succeeded"
    (True, True)
    """

    SUCCEEDED = "succeeded"
    FAILED = "failed"


SUCCEEDED = RunStatus.SUCCEEDED
"""`ProcessRun.status` of a make() that returned."""
FAILED = RunStatus.FAILED
"""`ProcessRun.status` of a make() that raised."""


class _StatusProperty(Property):
    """The ``status`` column: text in the database (what older versions wrote), a
    `RunStatus` when read on a run."""

    def __get__(self, obj: DBObject | None, cls: type | None = None) -> Any:
        value = super().__get__(obj, cls)
        if obj is None or isinstance(value, RunStatus):
            return value
        # A value no member has (an empty default) is left as it is rather than refused.
        return RunStatus._value2member_map_.get(value, value)

    def check(self, value: Any, owner_name: str | None = None) -> Any:
        checked = super().check(value, owner_name)
        # stored and compared as plain text, whichever driver binds it
        return str.__str__(checked) if isinstance(checked, RunStatus) else checked


class ProcessRun(DBObject):
    """One call of a process target's ``make()``.

    A successful run is committed with its target (the target links to it through
    ``process_run``); a failed one is committed on its own, with nothing else of its make.
    Its `status` is a `RunStatus`. Query runs like any class:
    ``select((ProcessRun.status == RunStatus.FAILED) & (ProcessRun.target_class ==
    "BiasFrame"))`` (``ProcessRun.status == "failed"`` selects the same). Runs are written
    by ``make()``, not by users.

    Parameters
    ----------
    **values : Any
        Initial values of persistent attributes, by name; the others take their defaults.

    Raises
    ------
    UnknownAttributeError
        When a keyword names no persistent attribute of the run.
    PersistentTypeError
        When a value is not of its attribute's type.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent, select
    >>> db = connect("sqlite:///doc.db")
    >>> class DocRunRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocRunReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocRunRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         if self.raw.level < 0:
    ...             raise ValueError("negative counts")
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocRunRaw(level=130.0)
    >>> raw.commit()
    >>> target = DocRunReduced(raw=raw)
    >>> target.make()
    >>> target.commit()
    >>> run = target.process_run
    >>> run.succeeded, run.target_class, run.target_id == target.object_id
    (True, 'DocRunReduced', True)
    >>> run.inputs == [raw]
    True
    >>> try:
    ...     DocRunReduced(raw=DocRunRaw(level=-1.0)).make()
    ... except ValueError:
    ...     pass
    >>> runs = select(ProcessRun.target_class == "DocRunReduced")
    >>> [(r.error_type, r.error_message) for r in runs if not r.succeeded]
    [('builtins.ValueError', 'negative counts')]
    """

    __tablename__ = "awl_process_run"
    __run_output__ = False  # a record about a make, not one of its products
    # Attributes that differ between any two runs, or repeat what the diff shows elsewhere
    # (parameter values are compared on the parameters objects themselves).
    __diff_ignore__ = ("started", "ended", "duration", "host", "user", "pid", "target_id",
                       "parent_run_id", "call_trace", "calls_recorded", "calls_dropped",
                       "children", "outputs", "parameters", "covered_code")

    target_id = persistent("object_id of the target made", int, None, index=True)
    target_class = persistent("Class of the target", str, "", index=True)
    code_version = persistent("Code version of the target's class", str, "")
    covered_code = persistent("The user's code the code version covers: qualified name -> "
                              "digest (JSON object; empty for a declared version)", str, "{}")
    process_params = persistent("Parameters object used", DBObject, None)
    parameters = persistent("Parameter values used (JSON object)", str, "{}")
    # the doc is part of the stored class description: kept as older versions wrote it
    status = _StatusProperty("succeeded or failed", str, "", kind=Kind.DESCRIPTOR, index=True)
    started = persistent("Start of the make, UTC", datetime.datetime, None)
    ended = persistent("End of the make, UTC", datetime.datetime, None)
    duration = persistent("Wall time of the make [s]", float, None)
    host = persistent("Host name", str, "")
    user = persistent("User name", str, "")
    pid = persistent("Process id", int, None)
    python = persistent("Python implementation and version", str, "")
    packages = persistent("Versions of key packages (JSON object)", str, "{}")
    error_type = persistent("Exception class of a failed make", str, None)
    error_message = persistent("Exception message of a failed make", str, None)
    traceback = persistent("Traceback of a failed make", str, None)
    inputs = persistent("Stored objects read during the make", DBObject, [])
    outputs = persistent("Objects created during the make", DBObject, [])
    children = persistent("Runs of dependencies made during this make", DBObject, [])
    parent_run_id = persistent("object_id of the run whose make made this one", int, None,
                               index=True)
    call_trace = persistent("Calls made during the make (JSON list)", str, "[]")
    calls_recorded = persistent("Number of calls in the trace", int, 0)
    calls_dropped = persistent("Calls beyond the trace's limit, not recorded", int, 0)
    warnings = persistent("Warnings raised during the make, one per distinct warning: "
                          "'Category: message (file:line)', ' [N times]' when repeated",
                          str, [])
    warnings_count = persistent("Number of warnings raised during the make", int, 0)

    @property
    def succeeded(self) -> bool:
        """True when the make returned normally."""
        return self.status == SUCCEEDED

    def parameter_values(self) -> dict[str, Any]:
        """The parameter values the make used.

        Returns
        -------
        dict of str to Any
            Parameter name to value, as recorded.
        """
        return json.loads(self.parameters or "{}")

    def covered_code_digests(self) -> dict[str, str]:
        """The pieces of the user's code the run's code version covered, with their digests.

        Returns
        -------
        dict of str to str
            Qualified name to digest; empty for runs of declared versions and runs recorded
            before they were kept.
        """
        return json.loads(self.covered_code or "{}")

    def calls(self) -> list[dict[str, Any]]:
        """The call trace of the make, in call order.

        Returns
        -------
        list of dict
            One dict per call, with index, parent, depth, owner, method, arguments, result,
            duration and error.
        """
        return json.loads(self.call_trace or "[]")
