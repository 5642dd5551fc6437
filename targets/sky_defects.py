"""Defects the synthetic night can be asked to carry, for tests of retraction: a hot column in
one raw bias frame. Off by default, so the default night (and ``awl demo``) is unchanged; when
on, the generator's truth says where it is (`targets.sky.Truth.hot_column`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HotColumn:
    """A column of one raw bias frame read `excess` ADU too high over its whole length.

    Parameters
    ----------
    chip
        The detector (``ccd1`` ...).
    bias
        Which raw bias of the night, counting from 1 as its file name does
        (``bias_ccd1_02.fits`` is 2).
    column
        The column, 0-based (numpy); FITS column ``column + 1``.
    excess
        ADU added to every pixel of the column (before clipping to the saturation level).
    """

    chip: str = "ccd1"
    bias: int = 1
    column: int = 57
    excess: float = 3000.0

    @property
    def filename(self) -> str:
        """The raw bias frame that carries the column."""
        return f"bias_{self.chip}_{self.bias:02d}.fits"

    def fits_region(self) -> str:
        """The column as a retraction region (``x0:x1,y0:y1``, 1-based FITS pixels)."""
        return f"{self.column + 1}:{self.column + 1},*"

    def check(self, chip_names: tuple[str, ...], n_biases: int, shape: tuple[int, int]
              ) -> None:
        """Raise `ValueError` naming the field when the column is not in the night."""
        if self.chip not in chip_names:
            raise ValueError(f"SkyParameters.hot_column.chip {self.chip!r} is not a chip of "
                             f"the night {chip_names}")
        if not 1 <= self.bias <= n_biases:
            raise ValueError(f"SkyParameters.hot_column.bias must be 1..{n_biases} (the raw "
                             f"biases of a chip), got {self.bias}")
        if not 0 <= self.column < shape[1]:
            raise ValueError(f"SkyParameters.hot_column.column must be 0..{shape[1] - 1}, got "
                             f"{self.column}")

    def apply(self, filename: str, adu: np.ndarray) -> np.ndarray:
        """`adu` with the column raised when `filename` is the frame that carries it."""
        if filename != self.filename:
            return adu
        hot = adu.copy()
        hot[:, self.column] += self.excess
        return hot
