"""Fuzzing select(): hostile textual queries, expression-API calls and Query methods end in a
result or in one of awlineage's own errors, never a raw exception, and change no data, on both
backends.
The cases come from `tests.persistence.query_cases` (shared with benchmarks/query_fuzz.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.persistence.query_cases import (
    expressions,
    fingerprint,
    refinements,
    run_case,
    seed,
    texts,
)

_SETTINGS = settings(max_examples=500, deadline=None, database=None, derandomize=False,
                     suppress_health_check=list(HealthCheck))


def test_fuzzed_text_queries_raise_only_awlineage_errors_and_change_nothing(db) -> None:
    seed()
    before = fingerprint(db)

    @_SETTINGS
    @given(texts())
    def ends_cleanly(text: str) -> None:
        run_case(text)

    ends_cleanly()
    assert fingerprint(db) == before


def test_fuzzed_expressions_raise_only_awlineage_errors_and_change_nothing(db) -> None:
    objects = seed()
    before = fingerprint(db)

    @_SETTINGS
    @given(expressions(objects))
    def ends_cleanly(build) -> None:
        run_case(build)

    ends_cleanly()
    assert fingerprint(db) == before


def test_fuzzed_select_arguments_and_query_methods_raise_only_awlineage_errors(db) -> None:
    objects = seed()
    before = fingerprint(db)

    @_SETTINGS
    @given(refinements(objects))
    def ends_cleanly(build) -> None:
        run_case(build)

    ends_cleanly()
    assert fingerprint(db) == before
