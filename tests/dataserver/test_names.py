"""The one rule for file names, applied by every back end before touching storage."""

from __future__ import annotations

import pytest

from dataserver import InvalidFileName, validate_name, validate_prefix
from dataserver._names import MAX_SEGMENT_BYTES

LONGEST = ("a" * 200 + "/") * 4 + "a" * 220  # 1024 characters, no segment too long


@pytest.mark.parametrize("name", [
    "myfile.fits", "raw/2024-01-03/ccd50.fits", "Sci-WFI-#842 ccd50.fits", "ümlaut.fits",
    LONGEST, "x/.hidden", "..dots..fits", "a" * MAX_SEGMENT_BYTES, "é" * 127,
])
def test_valid_names_pass_unchanged(name):
    assert validate_name(name) == name


@pytest.mark.parametrize(("name", "reason"), [
    ("", "empty"),
    ("/abs/path", "absolute"),
    ("../up", "'..' segment"),
    ("a/../b", "'..' segment"),
    ("a/./b", "'.' segment"),
    ("a//b", "empty segment"),
    ("trailing/", "empty segment"),
    ("tab\tname", "control character"),
    ("del\x7fname", "control character"),
    ("nul\x00name", "NUL"),
    ("back\\slash", "backslash"),
    (".awl-tmp/put-1", "reserved"),
    (LONGEST + "a", "more than 1024"),
    ("é/" * 400 + "x", "1201 bytes in UTF-8, more than 1024"),
    ("dir/" + "a" * 300, "segment 2 .* 300 bytes in UTF-8, more than 255"),
    ("é" * 128, "256 bytes in UTF-8, more than 255"),
    ("lone\udc80surrogate", "not valid Unicode"),
    (42, "not int"),
])
def test_invalid_names_are_refused_with_the_rule_they_break(name, reason):
    with pytest.raises(InvalidFileName, match=reason):
        validate_name(name)


def test_prefixes_may_end_with_a_slash_but_follow_the_same_rules():
    assert validate_prefix("") == ""
    assert validate_prefix("raw/") == "raw/"
    assert validate_prefix("raw/ccd5") == "raw/ccd5"
    with pytest.raises(InvalidFileName, match=r"'\.\.' segment"):
        validate_prefix("../")
    with pytest.raises(InvalidFileName, match="absolute"):
        validate_prefix("/raw")
