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
from tests.persistence.models import CameraFrame


def test_syntax_error_shows_line_column_and_caret() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query("CameraFrame.exptime > 10 and\n  CameraFrame.chip == == 'a'")
    message = str(info.value)
    assert "unexpected '=='" in message and "line 2, column 23" in message
    assert message.splitlines()[-2] == "    CameraFrame.chip == == 'a'"
    assert message.splitlines()[-1] == "  " + " " * 22 + "^"


def test_unterminated_query_says_end_of_query() -> None:
    with pytest.raises(QuerySyntaxError, match="end of query"):
        parse_query("CameraFrame.exptime >")


def test_unknown_class_is_named_with_its_position() -> None:
    with pytest.raises(QueryError, match=r"unknown persistent class 'RawFrme'.*column 1"):
        parse_query("RawFrme.exptime > 1")


def test_an_unknown_class_offers_the_known_class_it_looks_like() -> None:
    with pytest.raises(QueryError, match=r"unknown persistent class 'CameraFrme' \(did you "
                                         r"mean CameraFrame\?\).*column 1"):
        parse_query("CameraFrme.exptime > 1")
    with pytest.raises(QueryError) as far:
        parse_query("Zyxwvut.exptime > 1")
    assert "did you mean" not in str(far.value)


def test_unknown_attribute_in_a_path_is_named() -> None:
    with pytest.raises(UnknownAttributeError, match=r"Instrument has no persistent attribute "
                                                    r"'nmae'.*column 24"):
        parse_query("CameraFrame.instrument.nmae == 'WFI'")


def test_wrong_value_type_is_named_with_the_attribute() -> None:
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.exptime expects float, got str"):
        parse_query("CameraFrame.exptime > 'long'")


def test_a_wrong_value_through_a_link_names_the_path_not_the_root_class() -> None:
    """CameraFrame has no ``altitude`` (and Instrument has a ``name`` of its own, as a root's
    attribute of the same name would be blamed wrongly)."""
    with pytest.raises(PersistentTypeError,
                       match=r"CameraFrame\.instrument\.site\.altitude expects float"):
        parse_query("CameraFrame.instrument.site.altitude > 'high'")
    with pytest.raises(PersistentTypeError, match=r"CameraFrame\.instrument\.name expects str"):
        CameraFrame.instrument.name == 1  # noqa: B015 (the comparison is what is checked)


def test_bare_attributes_need_a_class() -> None:
    with pytest.raises(QueryError, match="unknown persistent class 'chip'"):
        parse_query("chip == 'ccd50'")
    assert repr(parse_query("chip == 'ccd50'", CameraFrame)) == "CameraFrame.chip == 'ccd50'"


def test_parsed_tree_prints_back_as_text() -> None:
    text = "(CameraFrame.exptime > 10.0 and CameraFrame.keywords[2] == 'abc')"
    assert repr(parse_query(text)) == text


def test_not_equal_parses_as_a_comparison_and_bang_still_negates() -> None:
    assert repr(parse_query("CameraFrame.nexp != 2")) == "CameraFrame.nexp != 2"
    assert repr(parse_query("CameraFrame.nexp!=2")) == "CameraFrame.nexp != 2"
    assert repr(parse_query("!CameraFrame.nexp == 2")) == "not CameraFrame.nexp == 2"


def test_like_on_a_list_element_parses() -> None:
    assert repr(parse_query("CameraFrame.keywords[0] like 'O%'")) == \
        "CameraFrame.keywords[0] like 'O%'"


def test_number_literal_longer_than_the_limit_is_named_with_its_position() -> None:
    with pytest.raises(QueryError, match=r"number literal has 5,000 characters; the limit is "
                                         r"400 \(line 1, column 22\)"):
        parse_query("CameraFrame.nexp ==  " + "1" * 5000)


def test_an_unknown_class_in_a_condition_is_an_unknown_class_error_too(db) -> None:
    from awlineage import select
    from awlineage.errors import UnknownClassError

    for text in ("CameraFrme.chip == 'a'", "CameraFrme"):  # either form: one error to catch
        with pytest.raises(UnknownClassError, match="did you mean CameraFrame"):
            select(text)
    with pytest.raises(QueryError, match=r"'CameraFrme' \(did you mean CameraFrame\?\)"):
        select("CameraFrme.chip == 'a'")
