"""The celestial WCS of an image HDU as the image page's script needs it: the parameters of a
plain TAN (gnomonic) projection, which the browser inverts itself for every cursor position,
or the reason the page cannot (another projection, SIP or table distortions, axes swapped)."""

from __future__ import annotations

import warnings
from typing import Any

from astropy.io.fits import Header
from astropy.wcs import WCS, FITSFixedWarning


def tan_wcs(header: Header) -> tuple[dict[str, Any] | None, str | None]:
    """(the TAN parameters, None) of `header`'s WCS, or (None, why not).

    The parameters: ``crpix`` (1-based, FITS), ``crval`` and ``lonpole`` in degrees, ``cd``
    (the pixel-to-intermediate matrix in degrees per pixel, rows by world axis) and
    ``radesys``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        try:
            wcs = WCS(header, naxis=2)
            wcs.wcs.set()
        except Exception as exc:  # astropy raises many kinds for bad WCS cards
            return None, f"the header's WCS cannot be read: {exc}"
    ctype = list(wcs.wcs.ctype)
    if not wcs.has_celestial:
        return None, "the header has no celestial WCS"
    if ctype[0][4:8] != "-TAN" or ctype[1][4:8] != "-TAN" or wcs.wcs.lng != 0:
        return None, (f"the WCS projection is {ctype[0]}, {ctype[1]}; sky coordinates are "
                      "shown for TAN with RA on axis 1")
    if wcs.sip is not None or any(d is not None for d in (wcs.cpdis1, wcs.cpdis2, wcs.det2im1,
                                                          wcs.det2im2)):
        return None, "the WCS has distortions (SIP or tables); sky coordinates are not shown"
    return {
        "crpix": [float(v) for v in wcs.wcs.crpix],
        "crval": [float(v) for v in wcs.wcs.crval],
        "cd": [[float(v) for v in row] for row in wcs.pixel_scale_matrix],
        "lonpole": float(wcs.wcs.lonpole),
        "radesys": str(wcs.wcs.radesys or ""),
        "ctype": ctype,
    }, None
