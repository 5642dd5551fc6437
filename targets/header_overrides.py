"""Header values a user gives at ingest (``awl ingest --set KEYWORD=VALUE``, ``ingest(...,
overrides={...})``): checked as FITS cards, and as values ingest can read (a number for
EXPTIME, a date for DATE-OBS ...), before anything is read, then set in each frame's
header before it is read. A frame whose header they change is stored with the changed header
(a HISTORY line per change), so the file and the values recorded with it agree.

Examples
--------
>>> parse_override("EXPTIME=30"), parse_override("DATE-OBS=2024-03-14T21:05:30")
(('EXPTIME', 30), ('DATE-OBS', '2024-03-14T21:05:30'))
>>> header = fits.Header({"EXPTIME": "thirty"})
>>> apply_overrides(header, {"EXPTIME": 30})
["EXPTIME = 30 set at ingest (the header said 'thirty')"]
>>> header["EXPTIME"]
30
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping

from astropy.io import fits
from astropy.utils.exceptions import AstropyWarning

from targets.headers import check_given_values

_LAYOUT = re.compile(r"^(SIMPLE|XTENSION|BITPIX|NAXIS\d*|EXTEND|PCOUNT|GCOUNT|BZERO|BSCALE|"
                     r"BLANK|GROUPS|THEAP|TFIELDS|END)$")
"""Keywords that say how the bytes are laid out: an override would make the pixels unreadable."""

Value = str | int | float | bool | None
"""An override's value; None drops the keyword (it then counts as missing)."""


def parse_override(text: str) -> tuple[str, Value]:
    """``KEYWORD=VALUE`` as given to ``awl ingest --set``: the keyword (checked, see
    `check_overrides`) and the value as a FITS card would hold it: a whole number, a real
    number, else text (surrounding quotes removed); an empty value is None (drop the keyword).

    Raises
    ------
    ValueError
        Naming the text, when it has no ``=`` or names no valid keyword.
    """
    keyword, equals, value = text.partition("=")
    if not equals:
        raise ValueError(f"--set {text!r}: expected KEYWORD=VALUE (for example EXPTIME=30)")
    value = value.strip()
    parsed: Value
    if value == "":
        parsed = None
    elif re.fullmatch(r"[+-]?\d+", value):
        parsed = int(value)
    else:
        try:
            parsed = float(value)
        except ValueError:
            parsed = value[1:-1] if len(value) >= 2 and value[0] == value[-1] and \
                value[0] in "'\"" else value
    (keyword, parsed), = check_overrides({keyword: parsed}).items()
    return keyword, parsed


def parse_overrides(texts: Iterable[str]) -> dict[str, Value]:
    """Every ``--set KEYWORD=VALUE`` (see `parse_override`), by keyword.

    Raises
    ------
    ValueError
        As `parse_override`; or a keyword given twice.
    """
    parsed: dict[str, Value] = {}
    for text in texts:
        keyword, value = parse_override(text)
        if keyword in parsed:
            raise ValueError(f"--set {text}: {keyword} is given twice")
        parsed[keyword] = value
    return parsed


def check_overrides(overrides: Mapping[str, Value] | None) -> dict[str, Value]:
    """The overrides with their keywords in FITS form (upper case; ``HIERARCH`` before a
    keyword longer than 8 characters or with spaces), each checked to make a valid card.

    Raises
    ------
    ValueError
        Naming the keyword: not a valid FITS keyword, a keyword of the data's layout (BITPIX,
        NAXIS, BZERO ...), given twice, a value no FITS card can hold, or a value ingest
        cannot read (`targets.headers.check_given_values`: ``EXPTIME=abc``).
    """
    checked: dict[str, Value] = {}
    for given, value in (overrides or {}).items():
        keyword = _fits_keyword(given)
        if _LAYOUT.match(keyword):
            raise ValueError(f"--set {given}: {keyword} describes how the pixels are stored "
                             "and cannot be overridden")
        if keyword in checked:
            raise ValueError(f"--set {given}: {keyword} is given twice")
        if value is not None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", AstropyWarning)
                    card = fits.Card(keyword, value)
                    card.verify("exception")
                    _ = card.image
            except (ValueError, TypeError, fits.VerifyError, AstropyWarning) as exc:
                raise ValueError(f"--set {given}={value!r}: not a valid FITS card "
                                 f"({' '.join(str(exc).split())})") from None
        checked[keyword] = value
    check_given_values(checked)
    return checked


def _fits_keyword(given: str) -> str:
    keyword = " ".join(str(given).split()).upper()
    if keyword.startswith("HIERARCH "):
        keyword = keyword[len("HIERARCH "):]
    if not keyword:
        raise ValueError(f"--set {given!r}: no keyword before '='")
    if not re.fullmatch(r"[A-Z0-9_-]+( [A-Z0-9_-]+)*", keyword):
        raise ValueError(f"--set {given}: {keyword!r} is not a FITS keyword (A-Z, 0-9, '-' "
                         "and '_'; words with spaces for an ESO HIERARCH keyword)")
    return f"HIERARCH {keyword}" if len(keyword) > 8 or " " in keyword else keyword


def apply_overrides(header: fits.Header, overrides: Mapping[str, Value]) -> list[str]:
    """Set (or, for None, remove) each override in `header`, in place, with one HISTORY line
    per change; a CHECKSUM, no longer true of a changed header, is removed.

    Parameters
    ----------
    header
        A frame's header.
    overrides
        Checked overrides (`check_overrides`).

    Returns
    -------
    list of str
        One sentence per keyword changed (none for a value the header already has).
    """
    notes = []
    for keyword, value in overrides.items():
        present = keyword in header
        before = header[keyword] if present else None
        if value is None:
            if not present:
                continue
            header.remove(keyword, remove_all=True)
            notes.append(f"{keyword} removed at ingest (the header said {before!r})")
        else:
            if present and type(before) is type(value) and before == value:
                continue
            header[keyword] = value
            said = f"the header said {before!r}" if present else "not in the header"
            notes.append(f"{keyword} = {value!r} set at ingest ({said})")
    if notes:
        header.remove("CHECKSUM", ignore_missing=True, remove_all=True)
        for note in notes:
            header.add_history(f"awlineage ingest: {note}")
    return notes


__all__ = ["Value", "apply_overrides", "check_overrides", "parse_override", "parse_overrides"]
