"""Source lists as process targets: sources found and measured with sep on a coadd, each a
queryable `Source` (``select(Source.flux > 1000)``), with payload region lineage: a source's
row depends on its pixel box in the coadd. The file's SOURCES table is an astropy `QTable`
with units (``TUNITn``): `source_table` writes one, `read_sources` reads it back."""

from __future__ import annotations

import math

import numpy as np
from astropy import units as u
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.table import QTable
from astropy.wcs import WCS

from awlineage import (
    DataObject,
    DBObject,
    OnePer,
    Process,
    Retraction,
    affected_by,
    capture_regions,
    payload_boxes,
    persistent,
)
from awlineage.persistence import Expression
from targets.aperture_correction import ApertureCorrection
from targets.carried_rows import Carry, MergedRows, carry_from, merge_rows, record_carry
from targets.extraction import ExtractionParameters, extract_sources, source_boxes
from targets.frame_quality import IMPLAUSIBLE
from targets.images import read_hdus
from targets.parameters import SourceListParameters, stage_parameters
from targets.product_headers import IDENTIFYING, wcs_keywords
from targets.science import CoaddedRegriddedFrame

SOURCES_HDU = 1
"""The FITS extension of a source list's table (rows in source `number` order)."""

IMAGE_UNIT = "image"
"""Stands in `COLUMN_UNITS` for the unit of the image searched (its BUNIT)."""
COLUMN_UNITS: dict[str, str | None] = {
    "x": "pix", "y": "pix", "ra": "deg", "dec": "deg",
    "flux": IMAGE_UNIT, "flux_err": IMAGE_UNIT, "flags": None,
    "xmin": "pix", "xmax": "pix", "ymin": "pix", "ymax": "pix",
    "a": "pix", "b": "pix", "theta": "rad", "peak": IMAGE_UNIT, "npix": None,
    "kron_radius": None, "background": IMAGE_UNIT, "aperture_correction": None,
}
"""The unit of each column of the SOURCES table (None: a count, flags, or the Kron radius,
which is in units of the source's a and b, and the aperture correction, a factor)."""


def _flux_unit(image_unit: str | u.UnitBase | None) -> u.UnitBase:
    if not image_unit:
        return u.dimensionless_unscaled
    try:
        return u.Unit(image_unit, parse_strict="raise")
    except ValueError as error:
        raise ValueError(f"source table: image unit {image_unit!r} is not a unit astropy "
                         f"knows: {error}") from None


def _column_unit(name: str, flux_unit: u.UnitBase) -> u.UnitBase | None:
    unit = COLUMN_UNITS.get(name)
    return None if unit is None else flux_unit if unit == IMAGE_UNIT else u.Unit(unit)


def source_table(sources: np.ndarray, image_unit: str | u.UnitBase | None = None) -> QTable:
    """The sources (`targets.extraction.SOURCE_DTYPE` rows) as a table with units, integer
    columns kept integer; fluxes in `image_unit` (the image's BUNIT, e.g. ``electron/s``),
    dimensionless when None.

    Raises
    ------
    ValueError
        An `image_unit` astropy cannot parse (naming it).
    """
    flux_unit = _flux_unit(image_unit)
    table = QTable()
    for name in sources.dtype.names:  # type: ignore[union-attr]  # a structured array
        unit, column = _column_unit(name, flux_unit), np.asarray(sources[name])
        table[name] = column if unit is None else u.Quantity(column, unit, dtype=column.dtype)
    return table


def _unit_text(unit: u.UnitBase) -> str:
    """A unit for TUNITn: the FITS standard's form, or astropy's own for units the standard
    lacks (``electron / s``), which `read_sources` reads back."""
    try:
        return unit.to_string("fits")
    except ValueError:
        return unit.to_string()


def sources_hdu(sources: np.ndarray, image_unit: str | u.UnitBase | None = None
                ) -> fits.BinTableHDU:
    """The SOURCES table extension: one row per source, TUNITn on every column with a unit.

    Raises
    ------
    ValueError
        An `image_unit` astropy cannot parse (naming it).
    """
    flux_unit = _flux_unit(image_unit)
    hdu = fits.BinTableHDU(np.ascontiguousarray(sources), name="SOURCES")
    for number, name in enumerate(sources.dtype.names,  # type: ignore[arg-type]  # structured
                                  start=1):
        unit = _column_unit(name, flux_unit)
        if unit is not None and unit != u.dimensionless_unscaled:
            hdu.header[f"TUNIT{number}"] = _unit_text(unit)
    return hdu


def read_sources(source_list: SourceList) -> QTable:
    """The SOURCES table of a source list's file, each column with the unit it was written
    with (``TUNITn``).

    Raises
    ------
    ValueError
        A TUNITn astropy cannot read, naming the file, column and unit.
    """
    with source_list.open_fits(memmap=False) as hdul:
        hdu = hdul[SOURCES_HDU]
        table = QTable()
        for number, name in enumerate(hdu.columns.names, start=1):
            column = np.array(hdu.data[name])
            text = hdu.header.get(f"TUNIT{number}")
            if not text:
                table[name] = column
                continue
            try:
                unit = u.Unit(text, format="fits")
            except ValueError:
                try:
                    unit = u.Unit(text, parse_strict="raise")
                except ValueError:
                    raise ValueError(f"{source_list.filename}: SOURCES column {name!r} has "
                                     f"TUNIT{number}={text!r}, not a unit astropy knows"
                                     ) from None
            table[name] = u.Quantity(column, unit, dtype=column.dtype)
    return table


class SourceList(Process, DataObject):
    """The sources of a coadd; the file holds them as a table in HDU 1 (SOURCES)."""

    file_extension = ".fits"
    identity = ("object_name", "filter")
    targets = OnePer(CoaddedRegriddedFrame, link="coadd", copy=("object_name", "filter"))

    coadd = persistent("The coadd searched", CoaddedRegriddedFrame, None)
    object_name = persistent("Field observed", str, "", index=True)
    filter = persistent("Filter", str, "", index=True)
    nsources = persistent("Number of sources", int, None)
    background_level = persistent("Global background of the coadd [e-/s]", float, None)
    background_rms = persistent("Global background noise of the coadd [e-/s]", float, None)
    aperture_correction = persistent("Aperture correction of the minimum circle: a compact "
                                     "source's total flux over its flux in that circle (1: "
                                     "none); each source's is in the table", float, None)
    aperture_correction_method = persistent("How the aperture correction was found: stars "
                                            "(curve of growth of the image's bright isolated "
                                            "stars), sources (too few stars: its compact "
                                            "sources') or none, prefixed own+ when sources "
                                            "were measured out to circles of their own",
                                            str, None)
    process_params = persistent("Processing parameters", SourceListParameters, None)
    carried_from = persistent("object_id of the previous version whose rows no retracted "
                              "cell reached were carried byte for byte (None: every row "
                              "measured here; see targets.carried_rows)", int, None)
    rows_carried = persistent("Rows carried from carried_from", int, 0)
    rows_remeasured = persistent("Rows measured here because their boxes reach cells a "
                                 "retraction changed (all rows when nothing was carried)",
                                 int, None)
    notes = persistent("Flags of the frames coadded (implausible frames: "
                       "targets.frame_quality), carried to the sources", str, [])

    def make(self) -> None:
        """Find and measure the coadd's sources, or, remade after a region retraction, carry
        the previous version's rows no retracted cell reached and measure only the others
        (`targets.carried_rows`)."""
        self.notes = [note for frame in self.coadd.regridded_frames
                      for note in frame.reduced.notes if note.startswith(IMPLAUSIBLE)]
        (data, header), (weight, _) = read_hdus(self.coadd, (0, "WEIGHT"))
        parameters = stage_parameters(self.process_params, ExtractionParameters)
        extraction = extract_sources(data, weight, WCS(header), parameters)
        carry = self._carry(data.shape)
        merged = None if carry is None else merge_rows(carry.rows, extraction.sources,
                                                       carry.reached)
        sources = extraction.sources if merged is None else merged.rows
        self._record_rows(carry, merged, len(sources))
        self.nsources = len(sources)
        self.background_level = extraction.background_level
        self.background_rms = extraction.background_rms
        correction = extraction.correction
        self.aperture_correction = float(correction.factor(parameters.min_radius))
        self.aperture_correction_method = correction.method
        table = sources_hdu(sources, header.get("BUNIT") or None)
        _record_correction(table.header, correction, parameters.min_radius)
        record_carry(table.header, carry, merged)
        # the coadd by its content, not its file name: the name holds the coadd's object id,
        # new at every remake, and the same inputs must give the same bytes
        table.header["COADDSHA"] = self.coadd.content_hash  # no room left for a comment
        table.header.add_comment("COADDSHA: SHA-256 of the coadd searched (its file)")
        self.store(fits.HDUList([fits.PrimaryHDU(header=_list_header(header, self.filter)),
                                 table]))
        for number, row in enumerate(sources):
            measured = {name: _measured(row[name].item()) for name in Source.MEASURED}
            # an (ra, dec) pair in ICRS degrees: no SkyCoord built per source
            position = None if measured["ra"] is None or measured["dec"] is None else \
                (measured["ra"], measured["dec"])
            Source(sourcelist=self, number=number, position=position, **measured)
        # a row depends on its star's pixel box; a carried row's box is the same cells of
        # this coadd, which the remake left equal to the previous coadd's
        with capture_regions(self) as capture:
            call = capture.operator(payload_boxes(), [capture.array(
                self.coadd, shape=data.shape)], hdu=SOURCES_HDU, shape=(len(sources),))
            if len(sources):
                call.lwrite_payload(np.arange(len(sources))[:, None], source_boxes(sources))
            call.close()

    def _carry(self, shape: tuple[int, ...]) -> Carry | None:
        """What may be carried from the previous version (None: extract everything)."""
        params = self.process_params
        if params is not None and not getattr(params, "carry_rows", True):
            return None
        return carry_from(self, self.coadd, shape)

    def _record_rows(self, carry: Carry | None, merged: MergedRows | None, total: int) -> None:
        if carry is None or merged is None:
            self.carried_from, self.rows_carried, self.rows_remeasured = None, 0, total
            return
        self.carried_from = carry.previous.object_id
        self.rows_carried, self.rows_remeasured = merged.carried, merged.remeasured


def _record_correction(header: fits.Header, correction: ApertureCorrection,
                       min_radius: float) -> None:
    """The aperture correction on the SOURCES table's header: fluxes are totals."""
    header["APCORR"] = (round(float(correction.factor(min_radius)), 5),
                        "FLUX is total: total/min. circle flux")
    header["APCORMTH"] = (correction.method, "aperture corr.: [own+]stars, sources, none")
    header["APCORNST"] = (correction.stars, "stars in the curve of growth")
    header["APCORRAD"] = (correction.total_radius, "[pixel] radius of total light")


def _list_header(coadd_header: fits.Header, filter_name: str) -> fits.Header:
    """The source list's primary header: the coadd's identifying keywords, the span of its
    frames (see `targets.product_headers`), the filter the list is for (the coadd's header
    may name it under another keyword, or not at all) and the coadd's WCS, whose frame
    (RADESYS, ICRS on a sky grid) is that of the table's RA and Dec."""
    kept = fits.Header()
    for keyword in (*IDENTIFYING, "NCOMBINE", "EXPTIME", "DATE-OBS", "DATE-BEG", "DATE-END",
                    "MJD-OBS", *wcs_keywords(coadd_header)):
        if keyword in coadd_header:
            kept[keyword] = (coadd_header[keyword], coadd_header.comments[keyword])
    if filter_name:
        kept["FILTER"] = (filter_name, "filter of the coadd searched")
    if "CTYPE1" in kept and "RADESYS" not in kept:  # what the grid's WCS says when unsaid
        kept["RADESYS"] = ("ICRS", "frame of the WCS and of the RA/Dec columns")
    return kept


def _measured(value: float | int) -> float | int | None:
    """A measurement as a Source stores it: None where sep could not measure (NaN, as for a
    source cut by the frame's edge whose aperture holds no pixel); the table keeps the NaN."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


class Source(DBObject):
    """A source found in a coadd: position, flux, shape and sep's flags."""

    MEASURED = ("x", "y", "ra", "dec", "flux", "flux_err", "flags", "a", "b", "theta", "peak",
                "npix")

    sourcelist = persistent("The source list it belongs to", SourceList, None)
    number = persistent("Row in the source list's table (HDU 1)", int, None)
    x = persistent("Column in the coadd [pixel, 0-based]", float, None)
    y = persistent("Row in the coadd [pixel, 0-based]", float, None)
    ra = persistent("Right ascension (ICRS) [deg]", float, None, index=True)
    dec = persistent("Declination (ICRS) [deg]", float, None, index=True)
    position = persistent("Position (ICRS), as ra and dec; for sky queries: "
                          "Source.position.within(Circle(...))", SkyCoord, None)
    flux = persistent("Total flux: Kron flux, aperture-corrected [e-/s]", float, None, index=True)
    flux_err = persistent("Error of the flux [e-/s]", float, None)
    flags = persistent("sep's extraction flags, OR-ed", int, 0)
    a = persistent("Semi-major axis [pixel]", float, None)
    b = persistent("Semi-minor axis [pixel]", float, None)
    theta = persistent("Position angle [rad]", float, None)
    peak = persistent("Peak value [e-/s]", float, None)
    npix = persistent("Pixels above threshold", int, None)

    @classmethod
    def affected_by(cls, retraction: Retraction | DBObject | int,
                    region: str | None = None) -> Expression:
        """The sources that retracted data reached, as a condition for `select`:
        ``select(Source.affected_by(record) & (Source.flux > 100))`` (`awlineage.affected_by`
        for this class)."""
        return affected_by(cls, retraction, region)

    def region_anchor(self) -> tuple[SourceList, list[list[int]], int]:
        """What the source stands for in region lineage: its row of the source list's table
        (so a dependency cutout follows it to every image that made it)."""
        return self.sourcelist, [[self.number]], SOURCES_HDU
