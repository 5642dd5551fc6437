"""The call trace of a make: calls to methods of persistent objects and to @traced functions,
with arguments, results, durations and nesting; nothing is recorded outside a make."""

from __future__ import annotations

import pytest

from awlineage import commit, traced
from awlineage.trace import short_repr
from tests.trace.models import Exposure, MasterLevel, clipped_mean


def test_call_trace_nests_methods_and_traced_functions_under_make(db) -> None:
    stored = [Exposure(chip="ccd50", counts=[1.0, 2.0, 3.0])]
    commit(stored)
    master = MasterLevel(exposures=stored)
    master.make()
    master.commit()
    calls = master.process_run.calls()
    assert [(c["owner"], c["method"], c["depth"]) for c in calls] == [
        ("MasterLevel", "make", 0),
        ("MasterLevel", "combine", 1),
        ("models", "clipped_mean", 2),
    ]
    make, combine, mean = calls
    assert combine["parent"] == make["index"] and mean["parent"] == combine["index"]
    assert mean["arguments"] == "[1.0, 2.0, 3.0], 3.0"
    assert mean["result"] == "2.0"
    assert combine["arguments"] == f"<MasterLevel {master.object_id}>"
    assert make["duration"] >= combine["duration"] >= mean["duration"] >= 0
    assert master.process_run.calls_recorded == 3


def test_calls_outside_a_make_are_not_traced() -> None:
    assert clipped_mean([1.0, 3.0], 3.0) == 2.0
    assert getattr(clipped_mean, "__awl_traced__", False)


def test_a_call_that_raises_is_recorded_with_its_error() -> None:
    from awlineage.trace._calls import CallLog

    log = CallLog()

    def fails(x: int) -> int:
        raise KeyError(x)

    with pytest.raises(KeyError):
        log.call("owner", "fails", fails, (7,), {})
    assert log.entries[0][8] == "KeyError: '7'"


def test_long_arguments_are_cut_and_arrays_shown_by_shape() -> None:
    import numpy as np

    assert short_repr(np.zeros((4, 5), dtype=np.float32)) == \
        "<ndarray shape=(4, 5) dtype=float32>"
    assert len(short_repr("x" * 10_000)) <= 200
    assert short_repr(list(range(100))).endswith("...]")


def test_a_fits_file_is_shown_by_its_name_without_reading_its_other_headers(tmp_path) -> None:
    import numpy as np
    from astropy.io import fits

    in_memory = fits.HDUList([fits.PrimaryHDU(np.zeros(3)), fits.ImageHDU(name="WEIGHT")])
    assert short_repr(in_memory) == "<HDUList of 2 HDUs>"
    in_memory.writeto(tmp_path / "frame.fits")
    with fits.open(tmp_path / "frame.fits") as opened:
        assert short_repr(opened) == "<HDUList of frame.fits>"
        assert not opened._read_all  # the WEIGHT header is read only when asked for
        assert opened["WEIGHT"].name == "WEIGHT"


def test_the_log_stops_at_its_limit_and_counts_what_it_dropped() -> None:
    from awlineage.trace._calls import CallLog

    log = CallLog(max_calls=2)
    for i in range(5):
        log.call("o", "m", lambda v: v, (i,), {})
    assert len(log.entries) == 2 and log.dropped == 3


@traced
def _double(x: int) -> int:
    return 2 * x


def test_traced_keeps_the_function_name_and_result() -> None:
    assert _double(4) == 8 and _double.__name__ == "_double"
