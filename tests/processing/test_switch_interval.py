"""The GIL's switch interval is short while any Spark executor lives, and Python's own value
comes back when the last one closes, whatever the order they open and close in."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from awlineage.processing._switch_interval import ShortSwitchInterval

SHORT, LONG = 0.0005, 0.005


@pytest.fixture
def default_interval() -> Iterator[None]:
    """Python's default interval and no holder: those outside the test (the session's Spark
    executor) are set aside meanwhile."""
    held, saved = ShortSwitchInterval._holders, ShortSwitchInterval._saved
    before = sys.getswitchinterval()
    ShortSwitchInterval._holders = 0
    sys.setswitchinterval(LONG)
    yield
    ShortSwitchInterval._holders, ShortSwitchInterval._saved = held, saved
    sys.setswitchinterval(before)


def test_nested_holders_restore_only_when_the_outer_one_releases(default_interval) -> None:
    outer = ShortSwitchInterval(SHORT)
    inner = ShortSwitchInterval(SHORT)
    inner.release()
    assert sys.getswitchinterval() == pytest.approx(SHORT)
    outer.release()
    assert sys.getswitchinterval() == pytest.approx(LONG)


def test_interleaved_holders_restore_the_value_found_by_the_first(default_interval) -> None:
    first = ShortSwitchInterval(SHORT)
    second = ShortSwitchInterval(SHORT)
    first.release()  # the first to open closes first: the second still runs
    assert sys.getswitchinterval() == pytest.approx(SHORT)
    third = ShortSwitchInterval(SHORT)  # finds the short value: must not restore it
    second.release()
    third.release()
    assert sys.getswitchinterval() == pytest.approx(LONG)


def test_a_second_release_does_not_count_twice(default_interval) -> None:
    first = ShortSwitchInterval(SHORT)
    second = ShortSwitchInterval(SHORT)
    second.release()
    second.release()
    assert sys.getswitchinterval() == pytest.approx(SHORT) and first.held
    first.release()
    assert sys.getswitchinterval() == pytest.approx(LONG) and not first.held


def test_a_holder_never_lengthens_the_interval(default_interval) -> None:
    sys.setswitchinterval(0.0001)
    held = ShortSwitchInterval(SHORT)
    assert sys.getswitchinterval() == pytest.approx(0.0001, abs=2e-6)
    held.release()
    assert sys.getswitchinterval() == pytest.approx(0.0001, abs=2e-6)
