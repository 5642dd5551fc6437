"""Sky and time values: positions, footprints, regions and intervals, with exact tests, and
the HEALPix cells that let both databases pre-select them with B-tree indexes.

Used by `awlineage.persistence` (the property types) and `awlineage.query` (the predicates);
depends on numpy, and on astropy and cdshealpix only when a function needs them.
"""

from awlineage.spacetime._footprint import Footprint, footprint_from_wcs
from awlineage.spacetime._healpix import (
    FOOTPRINT_ORDER,
    MAX_FOOTPRINT_CELLS,
    POSITION_ORDER,
    footprint_cells,
    position_cells,
    region_ranges,
)
from awlineage.spacetime._inputs import as_degrees, as_radec
from awlineage.spacetime._interval import EARLIEST, LATEST, Interval, as_utc
from awlineage.spacetime._position import (
    SkyPosition,
    is_skycoord_type,
    skycoord_type,
    value_kind_of,
)
from awlineage.spacetime._regions import Box, Circle, Polygon, SkyRegion
from awlineage.spacetime._vectors import chord_squared, unit_vector, unit_vectors

__all__ = [
    "EARLIEST", "FOOTPRINT_ORDER", "LATEST", "MAX_FOOTPRINT_CELLS", "POSITION_ORDER", "Box",
    "Circle", "Footprint", "Interval", "Polygon", "SkyPosition", "SkyRegion", "as_degrees",
    "as_radec", "as_utc", "chord_squared", "footprint_cells", "footprint_from_wcs",
    "is_skycoord_type", "position_cells", "region_ranges", "skycoord_type", "unit_vector",
    "unit_vectors", "value_kind_of",
]
