"""Textual queries point at their mistakes: line, column, caret, and the name that is wrong.
These need no database: parsing happens before any SQL."""

from __future__ import annotations

import pytest

from awlineage import (
    PersistentTypeError,
    QueryError,
    QuerySyntaxError,
    UnknownAttributeError,
    parse_query,
)
from tests.persistence.models import Exposure


def test_syntax_error_shows_line_column_and_caret() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query("Exposure.exptime > 10 and\n  Exposure.chip == == 'a'")
    message = str(info.value)
    assert "unexpected '=='" in message and "line 2, column 20" in message
    assert message.splitlines()[-2] == "    Exposure.chip == == 'a'"
    assert message.splitlines()[-1] == "  " + " " * 19 + "^"


def test_unterminated_query_says_end_of_query() -> None:
    with pytest.raises(QuerySyntaxError, match="end of query"):
        parse_query("Exposure.exptime >")


def test_unknown_class_is_named_with_its_position() -> None:
    with pytest.raises(QueryError, match=r"unknown persistent class 'RawFrme'.*column 1"):
        parse_query("RawFrme.exptime > 1")


def test_unknown_attribute_in_a_path_is_named() -> None:
    with pytest.raises(UnknownAttributeError, match=r"Instrument has no persistent attribute "
                                                    r"'nmae'.*column 21"):
        parse_query("Exposure.instrument.nmae == 'WFI'")


def test_wrong_value_type_is_named_with_the_attribute() -> None:
    with pytest.raises(PersistentTypeError, match=r"Exposure\.exptime expects float, got str"):
        parse_query("Exposure.exptime > 'long'")


def test_bare_attributes_need_a_class() -> None:
    with pytest.raises(QueryError, match="unknown persistent class 'chip'"):
        parse_query("chip == 'ccd50'")
    assert repr(parse_query("chip == 'ccd50'", Exposure)) == "Exposure.chip == 'ccd50'"


def test_parsed_tree_prints_back_as_text() -> None:
    text = "(Exposure.exptime > 10.0 and Exposure.keywords[2] == 'abc')"
    assert repr(parse_query(text)) == text
