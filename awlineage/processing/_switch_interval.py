"""`ShortSwitchInterval`: the driver hands the GIL over more often while a Spark executor
lives (`awlineage.processing._spark.SWITCH_INTERVAL`), and gets Python's value back when the
last of them closes.

Several executors may live at once, opened and closed in any order (a make inside another's
lifetime, a test's executor beside a session's). Each one saving the interval it found and
putting it back on close would go wrong: the first to close would restore the long interval
while the other still runs, or a later one would "restore" the short interval it found. So
the holders are counted: the first one saves the interval, each sets at most its own, and
the last one to release puts the saved value back."""

from __future__ import annotations

import sys
import threading


class ShortSwitchInterval:
    """Holds ``sys.getswitchinterval()`` at `seconds` or less until `release`.

    Parameters
    ----------
    seconds
        The longest interval wanted while held.

    Examples
    --------
    >>> import sys
    >>> before = sys.getswitchinterval()
    >>> outer, inner = ShortSwitchInterval(0.0005), ShortSwitchInterval(0.0005)
    >>> outer.release()                      # inner still holds it
    >>> sys.getswitchinterval() == 0.0005
    True
    >>> inner.release(); inner.release()     # a second release does nothing
    >>> sys.getswitchinterval() == before
    True
    """

    _lock = threading.Lock()
    _holders = 0
    _saved = 0.0

    def __init__(self, seconds: float) -> None:
        cls = ShortSwitchInterval
        with cls._lock:
            current = sys.getswitchinterval()
            if cls._holders == 0:
                cls._saved = current
            cls._holders += 1
            sys.setswitchinterval(min(current, seconds))
        self._held = True

    @property
    def held(self) -> bool:
        """Whether this holder has not released yet."""
        return self._held

    def release(self) -> None:
        """Give up this hold (again: nothing); the last holder restores the interval found
        by the first."""
        cls = ShortSwitchInterval
        with cls._lock:
            if not self._held:
                return
            self._held = False
            cls._holders -= 1
            if cls._holders == 0:
                sys.setswitchinterval(cls._saved)
