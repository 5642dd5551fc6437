"""make() tracing: process targets, their parameters and code versions, and the process run
written around every make(), with its inputs, outputs, environment and call trace."""

from awlineage.errors import PropertyDefinitionError
from awlineage.persistence import DBObjectMeta
from awlineage.trace._calls import short_repr, traced, traced_method
from awlineage.trace._codeversion import code_version, covered_code
from awlineage.trace._context import current_recorder, unrecorded
from awlineage.trace._make import runs_finished, traced_make
from awlineage.trace._process import (
    Process,
    ProcessParameters,
    default_parameters,
    parameter_values,
)
from awlineage.trace._run import FAILED, SUCCEEDED, ProcessRun, RunStatus

# Methods of framework classes that appear in call traces (user classes: every public method).
FRAMEWORK_TRACED_METHODS: dict[str, tuple[str, ...]] = {
    "DataObject": ("store", "retrieve", "open_fits"),
}


def current_run() -> ProcessRun | None:
    """The process run of the make() running in this context, or None outside a make.

    Returns
    -------
    ProcessRun or None
        The run being recorded (not yet committed), for a make() that wants to note
        something about itself or hand its run to a helper.

    Raises
    ------
    LookupError
        Never in practice: the context variable it reads always has a default (the section
        is here because every public function says what it raises).

    Examples
    --------
    >>> from awlineage import Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocCurrentRunTarget(Process):
    ...     made_by = persistent("Class named by the run", str, "")
    ...     def make(self):
    ...         self.made_by = current_run().target_class
    >>> target = DocCurrentRunTarget()
    >>> target.make()
    >>> target.made_by
    'DocCurrentRunTarget'
    >>> current_run() is None
    True
    """
    recorder = current_recorder.get()
    return None if recorder is None else recorder.run


def _instrument(cls: type) -> None:
    """Wrap make() of process targets and the traced methods of every persistent class."""
    namespace = cls.__dict__
    if issubclass(cls, Process) and "make" in namespace:
        # instrumenting is replacing the class's own make()
        cls.make = traced_make(namespace["make"])  # type: ignore[method-assign]
    if cls.__module__.startswith("awlineage."):
        names = FRAMEWORK_TRACED_METHODS.get(cls.__name__, ())
    else:
        names = tuple(name for name, value in namespace.items()
                      if not name.startswith("_") and name != "make" and callable(value)
                      and type(value).__name__ == "function")
    for name in names:
        if name in namespace:
            setattr(cls, name, traced_method(namespace[name]))


def _refuse_bad_code_version(cls: type) -> None:
    """A declared ``code_version`` is text that says something: a float such as 1.10 would
    be recorded as "1.1", and an empty string reads as no version in every message."""
    declared = cls.__dict__.get("code_version")
    if declared is None or not issubclass(cls, Process):
        return
    if not isinstance(declared, str) or not declared.strip():
        raise PropertyDefinitionError(
            f"{cls.__name__}.code_version must be a non-empty string such as \"1.0\" (or "
            f"left out, for a hash of the code), not {declared!r}")


DBObjectMeta.add_class_hook(_instrument)
DBObjectMeta.add_class_hook(_refuse_bad_code_version)

__all__ = [
    "FAILED",
    "SUCCEEDED",
    "Process",
    "ProcessParameters",
    "ProcessRun",
    "RunStatus",
    "code_version",
    "covered_code",
    "current_run",
    "default_parameters",
    "parameter_values",
    "runs_finished",
    "short_repr",
    "traced",
    "traced_make",
    "traced_method",
    "unrecorded",
]
