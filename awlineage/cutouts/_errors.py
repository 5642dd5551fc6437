"""What a cutout request can fail with: a usage error (the request is wrong, or asks for more
than the limits allow) or no overlap (the region has no pixel on any image)."""

from __future__ import annotations

from awlineage.errors import AwlError


class CutoutError(AwlError):
    """A cutout could not be made."""


class CutoutUsageError(CutoutError):
    """The request is wrong: a bad or missing parameter, an object without images, or more
    than a limit allows (SODA's ``UsageError``)."""


class NoOverlapError(CutoutError):
    """The region includes no pixel of the image(s) asked for (SODA answers 204)."""
