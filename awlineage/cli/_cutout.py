"""``awl cutout``: an object cut out of its image, or of every image that made it, into one
FITS file, without a server (the same cutouts as the viewer's SODA service)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from awlineage.cli._arguments import whole_number
from awlineage.cli._common import open_database, prepare
from awlineage.cli._ids import parse_id, resolve_id

LINEAGE = {None: None, "backward": True, "none": False}
"""``--lineage`` as `cutouts` takes it: None is the object's default."""


def _run(args: argparse.Namespace) -> int:
    from astropy import units as u
    from astropy.coordinates import Angle, SkyCoord

    from awlineage import config
    from awlineage.cutouts import CutoutUsageError, PixelBox, SkyCircle, anchor_of, cutouts
    from awlineage.storage import Session

    if Path(args.output).exists() and not args.overwrite:  # before any work is done
        raise CutoutUsageError(f"{args.output} exists: pass --overwrite to replace it")
    db = open_database(args)
    prepare(db, args.imports)
    obj = db.get(resolve_id(db, args.id))
    shape: PixelBox | SkyCircle | None = None
    if args.center and args.radius is None:
        raise CutoutUsageError("--center is the centre of --radius: give both, or --pixels "
                               "alone")
    if args.pixels:
        shape = PixelBox(*args.pixels)
        if min(args.pixels) < 1 or shape.x0 > shape.x1 or shape.y0 > shape.y1:
            raise CutoutUsageError("--pixels takes x0 x1 y0 y1: 1-based FITS pixels, each "
                                   "range from low to high")
    elif args.radius is not None:
        radius = _angle(args.radius, "--radius")
        if args.center:
            try:
                center = SkyCoord(args.center, unit=(u.deg, u.deg), frame="icrs")
            except ValueError as exc:
                raise CutoutUsageError(f"--center {args.center!r}: {exc}") from None
        elif hasattr(obj, "ra") and hasattr(obj, "dec") and anchor_of(obj) is not None:
            center = SkyCoord(obj.ra * u.deg, obj.dec * u.deg, frame="icrs")
        else:
            raise CutoutUsageError(f"--radius needs --center for {type(obj).__name__} "
                                   f"{obj.object_id} (only a source has a position of its own)")
        shape = SkyCircle(center, Angle(radius))
    session = Session(db, config.setting("data_url", args.data_url))
    with session.activate():
        hdul = cutouts(obj, shape, lineage=LINEAGE[args.lineage])
    hdul.writeto(args.output, overwrite=args.overwrite)
    print(f"{args.output}: {len(hdul) - 1} cutout{'s' if len(hdul) != 2 else ''} of "
          f"{type(obj).__name__} {obj.object_id}", file=sys.stderr)
    return 0


def _angle(text: str, option: str):
    from astropy import units as u

    from awlineage.cutouts import CutoutUsageError

    try:
        value = u.Quantity(text)
        angle = value.to(u.deg)
    except (TypeError, ValueError, u.UnitsError):
        raise CutoutUsageError(f"{option} {text!r} is not an angle with a unit, such as "
                               "5arcsec or 0.002deg") from None
    if angle.value <= 0:
        raise CutoutUsageError(f"{option} {text!r}: a radius must be positive, such as "
                               "3arcsec")
    if angle.value > 180:
        raise CutoutUsageError(f"{option} {text!r}: a radius is at most 180 degrees")
    return angle


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``cutout`` to the ``awl`` parser."""
    cut = commands.add_parser(
        "cutout", help="cut an object out of every image that made it, into one FITS file",
        description="Cut an image, or a source out of every image that made it (placed by "
        "region lineage, bias and flat included), into one multi-extension FITS file.")
    cut.add_argument("id", type=parse_id, help="object_id (or a unique prefix of one)")
    region = cut.add_mutually_exclusive_group()
    region.add_argument("--radius", help="a circle of this radius, with a unit (5arcsec, "
                        "0.002deg), around the source or --center")
    region.add_argument("--pixels", type=whole_number("a FITS pixel", low=1), nargs=4,
                        metavar=("X0", "X1", "Y0", "Y1"),
                        help="a pixel box: 1-based, inclusive FITS pixels (of the source's "
                        "coadd for a source)")
    cut.add_argument("--center", help="centre of --radius: 'ra dec' in degrees (ICRS) or "
                     "sexagesimal ('10h00m04.6s +2d12m44s')")
    cut.add_argument("--lineage", choices=("backward", "none"),
                     help="backward: also cut every ancestor image (the default for a "
                     "source); none: the image, or a source's coadd, alone (the default for "
                     "an image)")
    cut.add_argument("-o", "--output", required=True, help="the FITS file to write")
    cut.add_argument("--overwrite", action="store_true", help="replace an existing file")
    cut.add_argument("--data-url", help="where the files are (default: AWL_DATA_URL or "
                     "./awl-data)")
    cut.add_argument("--import", dest="imports", action="append", default=[],
                     help="module defining persistent classes (repeatable)")
    cut.set_defaults(run=_run, read_only=True)
