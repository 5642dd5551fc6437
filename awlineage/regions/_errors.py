"""The error region lineage raises for bad input, unsupported queries and missing records."""

from awlineage.errors import AwlError


class RegionError(AwlError):
    """Bad cells, shapes, operators or modes given to region lineage, or a query it cannot
    answer; the message names what was wrong."""
