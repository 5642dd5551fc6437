"""Call traces: the calls to methods of persistent objects and to ``@traced`` functions made
during a make(), with arguments, results, durations and nesting (seed 003's "Log 1").

Capture happens only at these boundaries: a wrapped method checks whether a run is being
recorded and, if not, calls straight through.
"""

from __future__ import annotations

import functools
import json
import os
import reprlib
import time
from collections.abc import Callable
from typing import Any, TypeVar

from awlineage.trace._context import current_recorder

F = TypeVar("F", bound=Callable[..., Any])

REPR_LIMIT = 200
DEFAULT_MAX_CALLS = 5000

_repr = reprlib.Repr()
_repr.maxstring = REPR_LIMIT
_repr.maxother = REPR_LIMIT
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 8


def short_repr(value: Any) -> str:
    """A bounded description of a value.

    Persistent objects are described by class and id, arrays by shape and dtype, a FITS file
    opened with astropy (an ``HDUList``) by its file name, everything else by a repr cut to
    `REPR_LIMIT` characters.

    Parameters
    ----------
    value : Any
        Any value; a failing ``__repr__`` is described, not raised.

    Returns
    -------
    str
        The description.

    Examples
    --------
    >>> short_repr(list(range(1000)))
    '[0, 1, 2, 3, 4, 5, 6, 7, ...]'
    """
    if hasattr(type(value), "_properties") and hasattr(value, "object_id"):
        return f"<{type(value).__name__} {value.object_id}>"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"<{type(value).__name__} shape={tuple(shape)} dtype={dtype}>"
    if type(value).__name__ == "HDUList" and callable(getattr(value, "filename", None)):
        return _hdu_list(value)
    try:
        text = _repr.repr(value)
    except Exception as exc:  # a broken __repr__ must not break the make
        text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    return text if len(text) <= REPR_LIMIT else text[:REPR_LIMIT - 3] + "..."


def _hdu_list(hdus: Any) -> str:
    """An astropy ``HDUList`` by its file, without reading it further: its repr (addresses
    of HDU objects) parses every header of the file first, which costs more than the read
    the traced call makes (`DataObject.open_fits` for one HDU)."""
    name = hdus.filename()
    if name:
        return f"<HDUList of {os.path.basename(name)}>"[:REPR_LIMIT]
    return f"<HDUList of {len(hdus)} HDUs>"  # in memory: nothing to read


class CallLog:
    """The calls of one run: a flat list in call order, each entry naming its parent."""

    def __init__(self, max_calls: int | None = None) -> None:
        limit = os.environ.get("AWL_TRACE_MAX_CALLS")
        self.max_calls = max_calls if max_calls is not None else \
            int(limit) if limit else DEFAULT_MAX_CALLS
        self.entries: list[list[Any]] = []
        self.dropped = 0
        self._open: list[int] = []

    def call(self, owner: str, name: str, function: Callable[..., Any],
             args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call `function(*args, **kwargs)` and record it (unless the log is full)."""
        if len(self.entries) >= self.max_calls:
            self.dropped += 1
            return function(*args, **kwargs)
        index = len(self.entries)
        parent = self._open[-1] if self._open else None
        shown = [short_repr(a) for a in args]
        shown.extend(f"{k}={short_repr(v)}" for k, v in kwargs.items())
        entry = [index, parent, len(self._open), owner, name, ", ".join(shown), None, 0.0, None]
        self.entries.append(entry)
        self._open.append(index)
        start = time.perf_counter()
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            entry[8] = f"{type(exc).__name__}: {short_repr(str(exc))}"
            raise
        finally:
            entry[7] = time.perf_counter() - start
            self._open.pop()
        entry[6] = short_repr(result)
        return result

    def to_json(self) -> str:
        """The log as JSON: a list of objects with index, parent, depth, owner, method,
        arguments, result, duration (s) and error."""
        keys = ("index", "parent", "depth", "owner", "method", "arguments", "result",
                "duration", "error")
        return json.dumps([dict(zip(keys, entry, strict=True)) for entry in self.entries])


def traced(function: F) -> F:
    """Record calls of `function` in the call trace of the make() that makes them.

    Outside a make() the function runs as if undecorated (one context-variable look-up).

    Parameters
    ----------
    function : callable
        The function to record; its module and qualified name identify it in the trace.

    Returns
    -------
    callable
        A wrapper with the same name, signature and result.

    Raises
    ------
    Exception
        Whatever `function` raises, unchanged (the call is recorded with its error first).

    Examples
    --------
    >>> from awlineage import Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> @traced
    ... def combine(frames, sigma=3.0):
    ...     return sum(frames)
    >>> combine([1, 2])
    3
    >>> class DocTracedStack(Process):
    ...     total = persistent("Sum of the frames", float, None)
    ...     def make(self):
    ...         self.total = combine([1.0, 2.0])
    >>> target = DocTracedStack()
    >>> target.make()
    >>> [(call["method"], call["result"]) for call in target.process_run.calls()]
    [('make', 'None'), ('combine', '3.0')]
    """
    owner = function.__module__.rpartition(".")[2] or function.__module__

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        recorder = current_recorder.get()
        if recorder is None:
            return function(*args, **kwargs)
        return recorder.calls.call(owner, function.__qualname__, function, args, kwargs)

    wrapper.__awl_traced__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def traced_method(function: Callable[..., Any]) -> Callable[..., Any]:
    """Like `traced`, for a method: the owner recorded is the class of the object called.

    Parameters
    ----------
    function : Callable
        The method; one wrapped already is returned as it is.

    Returns
    -------
    Callable
        The wrapped method, which records its calls while a process run is being recorded.
    """
    if getattr(function, "__awl_traced__", False):
        return function
    name = function.__name__

    @functools.wraps(function)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = current_recorder.get()
        if recorder is None:
            return function(self, *args, **kwargs)
        return recorder.calls.call(type(self).__name__, name, function, (self, *args), kwargs)

    wrapper.__awl_traced__ = True  # type: ignore[attr-defined]
    return wrapper
