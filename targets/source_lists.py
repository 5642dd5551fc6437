"""Source lists as process targets: sources found and measured with sep on a coadd, each a
queryable `Source` (``select(Source.flux > 1000)``), with payload region lineage: a source's
row depends on its pixel box in the coadd."""

from __future__ import annotations

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

from awlineage import DataObject, DBObject, OnePer, Process, persistent
from awlineage.regions import capture_regions, payload_boxes
from targets.extraction import ExtractionParameters, extract_sources, source_boxes
from targets.images import read_hdu
from targets.parameters import SourceListParameters, stage_parameters
from targets.product_headers import IDENTIFYING
from targets.science import CoaddedRegriddedFrame

SOURCES_HDU = 1
"""The FITS extension of a source list's table (rows in source `number` order)."""


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
    process_params = persistent("Processing parameters", SourceListParameters, None)

    def make(self) -> None:
        data, header = read_hdu(self.coadd)
        weight = read_hdu(self.coadd, "WEIGHT")[0]
        extraction = extract_sources(data, weight, WCS(header),
                                     stage_parameters(self.process_params,
                                                      ExtractionParameters))
        sources = extraction.sources
        self.nsources = len(sources)
        self.background_level = extraction.background_level
        self.background_rms = extraction.background_rms
        table = fits.BinTableHDU(sources, name="SOURCES")
        table.header["COADD"] = self.coadd.filename
        self.store(fits.HDUList([fits.PrimaryHDU(header=_list_header(header)), table]))
        for number, row in enumerate(sources):
            Source(sourcelist=self, number=number, **{
                name: row[name].item() for name in Source.MEASURED})
        with capture_regions(self) as capture:  # a row depends on its star's pixel box
            call = capture.operator(payload_boxes(), [capture.array(
                self.coadd, shape=data.shape)], hdu=SOURCES_HDU, shape=(len(sources),))
            if len(sources):
                call.lwrite_payload(np.arange(len(sources))[:, None], source_boxes(sources))
            call.close()


def _list_header(coadd_header: fits.Header) -> fits.Header:
    """The coadd's identifying keywords and the span of its frames (see
    `targets.product_headers`), kept on the source list's primary header."""
    kept = fits.Header()
    for keyword in (*IDENTIFYING, "NCOMBINE", "EXPTIME", "DATE-OBS", "DATE-BEG", "DATE-END",
                    "MJD-OBS"):
        if keyword in coadd_header:
            kept[keyword] = (coadd_header[keyword], coadd_header.comments[keyword])
    return kept


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
    flux = persistent("Kron flux [e-/s]", float, None, index=True)
    flux_err = persistent("Error of the flux [e-/s]", float, None)
    flags = persistent("sep's extraction flags, OR-ed", int, 0)
    a = persistent("Semi-major axis [pixel]", float, None)
    b = persistent("Semi-minor axis [pixel]", float, None)
    theta = persistent("Position angle [rad]", float, None)
    peak = persistent("Peak value [e-/s]", float, None)
    npix = persistent("Pixels above threshold", int, None)

    def region_anchor(self) -> tuple[SourceList, list[list[int]], int]:
        """What the source stands for in region lineage: its row of the source list's table
        (so a dependency cutout follows it to every image that made it)."""
        return self.sourcelist, [[self.number]], SOURCES_HDU
