"""Real telescope images that astronomy packages ship in their test data, found where pip (or,
for ESO-MIDAS's test data, apt) put them (nothing is downloaded): the pipeline is tested and
measured on them beside the synthetic night.

>>> REAL_FILES["saao_overscan"].package, REAL_FILES["isaac_fk5"].debian
('ccdproc', True)
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RealFile:
    """One real FITS file of an installed package.

    Attributes
    ----------
    package, relative
        The distribution's import name and the file's path inside it; for a Debian package
        (`debian`), the package's name and a glob pattern under ``/usr`` (the pattern spares
        the version directory, ``eso-midas/22FEB/...``).
    what
        Instrument and what the file shows, for tables and messages.
    science
        Whether the file is a science frame the pipeline should turn into a source list (some
        are kept for ingest and header tests only).
    """

    package: str
    relative: str
    what: str
    science: bool = True
    debian: bool = False
    """Whether `package` is a Debian package (``.ci/run`` installs it with apt)."""

    def path(self) -> Path:
        """Where the file is.

        Raises
        ------
        FileNotFoundError
            When the package is not installed, or does not ship the file; naming both.
        """
        if self.debian:
            found = sorted(Path("/usr").glob(self.relative))
            if not found:
                raise FileNotFoundError(f"{self.what}: no /usr/{self.relative}; the Debian "
                                        f"package {self.package} is not installed (apt install "
                                        f"{self.package})")
            return found[-1]
        spec = importlib.util.find_spec(self.package)
        if spec is None or spec.origin is None:
            raise FileNotFoundError(f"{self.what}: package {self.package!r} is not installed "
                                    "(pip install -e '.[test]')")
        path = Path(spec.origin).parent / self.relative
        if not path.is_file():
            raise FileNotFoundError(f"{self.what}: {self.package} does not ship {self.relative}")
        return path


_MIDAS = "eso-midas-testdata"
_MIDAS_TEST = "lib/eso-midas/*/test/prim/"

REAL_FILES: dict[str, RealFile] = {
    "dss_m13": RealFile("astropy", "io/fits/hdu/compressed/tests/data/m13.fits",
                        "DSS plate scan of M13, 300x300, plate solution beside a TAN WCS"),
    "dss_plate": RealFile("astropy", "wcs/tests/data/dss.14.29.56-62.41.05.fits.gz",
                          "DSS plate scan, 100x100: plate solution, SKEW, CROTA, CD and PC001001 "
                          "beside CTYPE"),
    "saao_overscan": RealFile("ccdproc", "tests/data/a8280271.fits",
                              "SAAO 1.0m STE3 CCD, 520x536 raw with BIASSEC/TRIMSEC overscan"),
    "ukidss_wfcam": RealFile("astroquery", "ukidss/tests/data/image.fits",
                             "UKIRT WFCAM K band, 300x300 infrared, image in extension 1, ZPN"),
    "hst_hdfs": RealFile("mpdaf", "data/obj/HST-HDFS.fits",
                         "HST WFPC2 Hubble Deep Field South, 500x500, undersampled, DATA ext."),
    "hst_a478": RealFile("mpdaf", "data/sdetect/a478hst-cutout.fits",
                         "HST WFPC2 cutout of Abell 478, 600x600, SCI/WHT/CTX extensions"),
    "lick_a370": RealFile("mpdaf", "data/obj/a370II.fits",
                          "Lick focam I band of Abell 370, 1797x1909"),
    "muse_white": RealFile("mpdaf", "data/obj/IMAGE-HDFS-1.34.fits",
                           "VLT MUSE white-light image of the HDFS, 331x326, DATA/STAT/DQ"),
    "gmos_south": RealFile("astroscrappy", "tests/data/gmos.fits",
                           "Gemini-South GMOS, 150x200 SCI/VAR/SKYFIT extensions"),
    "megaprime_ccd10": RealFile("astroquery", "cadc/tests/data/query_images.fits",
                                "CFHT MegaPrime cutout of ccd10, 101x101, EXTNAME chip",
                                science=False),
    "wfpc2_four_chips": RealFile("astropy", "io/fits/tests/data/test0.fits",
                                 "HST WFPC2, four 40x40 SCI chips in one file", science=False),
    "muse_cube": RealFile("mpdaf", "data/sdetect/minicube.fits",
                          "VLT MUSE 40x40 cube; its primary header has 1,309 ESO HIERARCH cards",
                          science=False),
    "sip_apogee": RealFile("ccdproc", "tests/data/sip-wcs.fit",
                           "Apogee Alta 50x100 with a TAN-SIP WCS", science=False),
    # ESO-MIDAS's test data (Debian's eso-midas-testdata)
    "vimos_two_chips": RealFile(_MIDAS, _MIDAS_TEST + "vimos.fits",
                                "VLT VIMOS dome flat, two 880x959 chips in one file (filter in "
                                "ESO INS FILT2 NAME on chip 1, FILT3 on chip 2), FK5",
                                science=False, debian=True),
    "isaac_fk5": RealFile(_MIDAS, _MIDAS_TEST + "ISAAC.2006-04-13T06:32:38.944.fits",
                          "VLT ISAAC 2.25 um narrow band, 1024x1024 infrared field in the "
                          "Galactic bulge, RADECSYS='FK5'", debian=True),
    "ukst_plate": RealFile(_MIDAS, _MIDAS_TEST + "dss_test2.fits",
                           "UK Schmidt plate scan (DSS, southern), 177x177, plate solution "
                           "beside a TAN WCS", debian=True),
    "poss_plate": RealFile("astroquery", "ipac/ned/tests/data/query_images.fits",
                           "Palomar 48-inch Schmidt plate scan of M1 (POSS-I E, DSS), 177x177, "
                           "plate solution only (no CTYPE)"),
    "alfosc_flat": RealFile(_MIDAS, _MIDAS_TEST + "NOT.fits",
                            "NOT ALFOSC raw flat, 2148x2052 with a BIASSEC overscan, filter in "
                            "FAFLTNM, chip in CCDNAME, FK5", science=False, debian=True),
    "dfosc_sky_flat": RealFile(_MIDAS, _MIDAS_TEST + "badfitskeys.mt",
                               "Danish 1.54m DFOSC sky flat, 2148x2102, only OBJECT='SKY_FLAT' "
                               "says so; FK5 at EQUINOX 2004.7; non-standard FILTER_A card",
                               science=False, debian=True),
}
"""The real files, by a short name."""


__all__ = ["REAL_FILES", "RealFile"]
