"""Pixel-level pieces of the synthetic sky: stars through a pixel-integrated Gaussian PSF,
cosmic-ray tracks, the flat-field response of a chip and the bias structure of a chip. Pure numpy;
the night-level bookkeeping (which frames, headers, truth) lives in `targets.sky`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import erf

FWHM_PER_SIGMA = 2.0 * np.sqrt(2.0 * np.log(2.0))


def render_stars(
    shape: tuple[int, int],
    x: np.ndarray,
    y: np.ndarray,
    flux: np.ndarray,
    sigma: float,
) -> np.ndarray:
    """Stars as Gaussians integrated exactly over each pixel.

    Parameters
    ----------
    shape
        (rows, columns) of the image.
    x, y
        0-based pixel positions of the star centres (column, row); pixel centres are integers.
    flux
        Total flux of each star (any unit; the image gets the same unit per pixel).
    sigma
        Gaussian sigma of the PSF in pixels.

    Returns
    -------
    numpy.ndarray
        float64 image of the given shape. Stars partly off the image contribute the part on it.
    """
    image = np.zeros(shape, dtype=np.float64)
    if len(x) == 0:
        return image
    half = int(np.ceil(5.0 * sigma)) + 1
    offsets = np.arange(-half, half + 1)
    cols = np.floor(x + 0.5).astype(np.int64)[:, None] + offsets  # (N, K)
    rows = np.floor(y + 0.5).astype(np.int64)[:, None] + offsets
    profile_x = _pixel_integrals(cols, x, sigma)
    profile_y = _pixel_integrals(rows, y, sigma)
    stamps = flux[:, None, None] * profile_y[:, :, None] * profile_x[:, None, :]
    rr = np.broadcast_to(rows[:, :, None], stamps.shape)
    cc = np.broadcast_to(cols[:, None, :], stamps.shape)
    inside = (rr >= 0) & (rr < shape[0]) & (cc >= 0) & (cc < shape[1])
    flat_index = rr[inside] * shape[1] + cc[inside]
    image += np.bincount(flat_index, weights=stamps[inside], minlength=image.size).reshape(shape)
    return image


def _pixel_integrals(pixels: np.ndarray, centre: np.ndarray, sigma: float) -> np.ndarray:
    """Fraction of a unit 1-d Gaussian at `centre` falling in each pixel (pixel i spans
    i - 0.5 to i + 0.5)."""
    scale = np.sqrt(2.0) * sigma
    offset = pixels - centre[:, None]
    return 0.5 * (erf((offset + 0.5) / scale) - erf((offset - 0.5) / scale))


@dataclass(frozen=True)
class CosmicRayHits:
    """The pixels hit by cosmic rays in one exposure.

    Attributes
    ----------
    rows, cols
        0-based pixel indices, one entry per hit pixel.
    event
        The cosmic-ray event (0, 1, ...) each pixel belongs to.
    deposit
        Charge deposited in the pixel, in electrons.
    """

    rows: np.ndarray
    cols: np.ndarray
    event: np.ndarray
    deposit: np.ndarray

    @property
    def nevents(self) -> int:
        """Number of cosmic-ray events."""
        return int(self.event.max()) + 1 if len(self.event) else 0

    def mask(self, shape: tuple[int, int]) -> np.ndarray:
        """Boolean image, True where a cosmic ray deposited charge."""
        mask = np.zeros(shape, dtype=bool)
        mask[self.rows, self.cols] = True
        return mask

    def image(self, shape: tuple[int, int]) -> np.ndarray:
        """The deposited charge as a float64 image in electrons."""
        image = np.zeros(shape, dtype=np.float64)
        np.add.at(image, (self.rows, self.cols), self.deposit)
        return image


def cosmic_ray_tracks(
    rng: np.random.Generator,
    shape: tuple[int, int],
    mean_events: float,
    deposit_range: tuple[float, float] = (300.0, 5000.0),
    max_length: int = 8,
) -> CosmicRayHits:
    """Straight cosmic-ray tracks of 1 to `max_length` pixels at random angles.

    Every pixel of a track gets its own deposit, log-uniform in `deposit_range` (electrons),
    so that every injected pixel is a real, detectable hit rather than a faint tail.
    The number of events is Poisson with mean `mean_events`.
    """
    nevents = int(rng.poisson(mean_events))
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    events: list[np.ndarray] = []
    for event in range(nevents):
        length = int(rng.integers(1, max_length + 1))
        angle = rng.uniform(0.0, np.pi)
        r0 = rng.uniform(0, shape[0])
        c0 = rng.uniform(0, shape[1])
        steps = np.arange(length)
        track_r = np.floor(r0 + steps * np.sin(angle)).astype(np.int64)
        track_c = np.floor(c0 + steps * np.cos(angle)).astype(np.int64)
        inside = (track_r >= 0) & (track_r < shape[0]) & (track_c >= 0) & (track_c < shape[1])
        pixels = np.unique(track_r[inside] * shape[1] + track_c[inside])
        rows.append(pixels // shape[1])
        cols.append(pixels % shape[1])
        events.append(np.full(len(pixels), event, dtype=np.int64))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return CosmicRayHits(empty, empty, empty, np.zeros(0))
    all_rows = np.concatenate(rows)
    low, high = np.log(deposit_range[0]), np.log(deposit_range[1])
    deposit = np.exp(rng.uniform(low, high, size=len(all_rows)))
    return CosmicRayHits(all_rows, np.concatenate(cols), np.concatenate(events), deposit)


def flat_response(
    rng: np.random.Generator,
    shape: tuple[int, int],
    focal_x: np.ndarray,
    focal_y: np.ndarray,
    focal_radius: float,
    vignetting: float,
    pixel_rms: float,
    bad_columns: int,
) -> np.ndarray:
    """Relative response of one chip in one filter, normalised to a median of 1.

    The response is a radial vignetting over the focal plane (1 - vignetting at `focal_radius`)
    times pixel-to-pixel variations of relative rms `pixel_rms`, with `bad_columns` nearly dead
    columns (response 2% of normal).

    Parameters
    ----------
    focal_x, focal_y
        1-d arrays: the focal-plane coordinate (pixels from the mosaic centre) of each column
        and each row of the chip.
    """
    radius2 = (focal_x[None, :] ** 2 + focal_y[:, None] ** 2) / focal_radius**2
    response = (1.0 - vignetting * radius2) * (1.0 + pixel_rms * rng.standard_normal(shape))
    for column in rng.choice(shape[1], size=min(bad_columns, shape[1]), replace=False):
        response[:, column] *= 0.02
    return response / np.median(response)


def bias_structure(
    rng: np.random.Generator, shape: tuple[int, int], level: float, column_rms: float = 1.5
) -> np.ndarray:
    """The noiseless bias of a chip in ADU: a level, a fixed column pattern and a gentle ramp
    along the readout direction, with mean exactly `level`."""
    columns = column_rms * rng.standard_normal(shape[1])
    ramp = np.linspace(-1.0, 1.0, shape[0])
    structure = columns[None, :] + ramp[:, None]
    return level + structure - structure.mean()
