"""The synthetic sky: a night of raw FITS frames from a small mosaic camera (biases, dome flats and
dithered science exposures in several filters) and the truth they were made from (star catalogue,
cosmic-ray hits, bias levels, flat patterns, read noise). Deterministic for a given seed.

Examples
--------
>>> from targets.sky import SkyParameters, generate_night
>>> night = generate_night(SkyParameters.preset("small", n_chips=1, filters=("r",),
...                                               sky_rates=(15.0,), n_dithers=1))
>>> sorted({frame.kind for frame in night.frames})
['bias', 'domeflat', 'science']
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from astropy.io import fits
from astropy.time import Time
from astropy.wcs import WCS

from targets.sky_defects import HotColumn
from targets.sky_render import (
    FWHM_PER_SIGMA,
    CosmicRayHits,
    bias_structure,
    cosmic_ray_tracks,
    flat_response,
    render_stars,
)

KINDS = ("bias", "domeflat", "science")
_PRESETS: dict[str, dict[str, Any]] = {
    "small": {},
    "medium": {"chip_shape": (1024, 1024), "n_chips": 4, "n_dithers": 4, "chip_gap": 40},
    "large": {"chip_shape": (2048, 2048), "n_chips": 4, "n_dithers": 5, "chip_gap": 60,
              "n_biases": 7, "n_flats": 5, "dither_arcsec": 30.0},
}


@dataclass(frozen=True)
class SkyParameters:
    """What the synthetic night contains. Defaults give the small night of the tests.

    Fluxes and rates are in electrons; levels written to the frames are in ADU (electrons / gain).
    """

    seed: int = 7
    chip_shape: tuple[int, int] = (256, 256)
    n_chips: int = 2
    chip_gap: int = 16
    filters: tuple[str, ...] = ("g", "r")
    sky_rates: tuple[float, ...] = (6.0, 15.0)
    n_fields: int = 1
    n_dithers: int = 3
    n_biases: int = 5
    n_flats: int = 3
    pixel_scale: float = 0.3
    field_centre: tuple[float, float] = (150.0, 2.2)
    field_spacing: float = 0.5
    dither_arcsec: float = 12.0
    rotation_rms_deg: float = 0.05
    exptime: float = 60.0
    flat_exptime: float = 4.0
    readout_time: float = 20.0
    night: str = "2024-03-14"
    instrument: str = "SYNCAM"
    bias_level: float = 500.0
    read_noise: float = 5.0
    gain: float = 2.0
    saturation: int = 65535
    dome_level: float = 40000.0
    seeing_fwhm: float = 1.0
    star_density: float = 25.0
    star_flux_range: tuple[float, float] = (20.0, 15000.0)
    star_flux_slope: float = 0.5
    cosmic_ray_rate: float = 4.5e-6
    vignetting: float = 0.08
    pixel_response_rms: float = 0.01
    bad_columns: int = 1
    hot_column: HotColumn | None = None
    """A hot column injected into one raw bias (`targets.sky_defects`); None: none."""

    def __post_init__(self) -> None:
        if len(self.chip_shape) != 2 or min(self.chip_shape) < 32:
            raise ValueError(f"SkyParameters.chip_shape must be (rows, cols) of at least 32 "
                             f"pixels each, got {self.chip_shape}")
        if len(self.sky_rates) != len(self.filters) or not self.filters:
            raise ValueError(f"SkyParameters.sky_rates needs one rate per filter: filters "
                             f"{self.filters}, sky_rates {self.sky_rates}")
        for name in ("n_chips", "n_fields", "n_dithers"):
            if getattr(self, name) < 1:
                raise ValueError(f"SkyParameters.{name} must be at least 1, got "
                                 f"{getattr(self, name)}")
        for name in ("n_biases", "n_flats", "bad_columns", "chip_gap"):
            if getattr(self, name) < 0:
                raise ValueError(f"SkyParameters.{name} must not be negative")
        for name in ("pixel_scale", "exptime", "gain", "seeing_fwhm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"SkyParameters.{name} must be positive, got "
                                 f"{getattr(self, name)}")
        if self.hot_column is not None:
            self.hot_column.check(self.chip_names, self.n_biases, self.chip_shape)

    @classmethod
    def preset(cls, size: str, **changes: object) -> SkyParameters:
        """Parameters of a named size: "small" (tests: 2 chips of 256x256), "medium"
        (4 chips of 1024x1024) or "large" (4 chips of 2048x2048), with `changes` applied."""
        if size not in _PRESETS:
            raise ValueError(f"unknown sky size {size!r}; choose one of {sorted(_PRESETS)}")
        return dataclasses.replace(cls(), **{**_PRESETS[size], **changes})

    @property
    def chip_names(self) -> tuple[str, ...]:
        """Detector names, ccd1 ... ccdN."""
        return tuple(f"ccd{i + 1}" for i in range(self.n_chips))

    @property
    def field_names(self) -> tuple[str, ...]:
        """OBJECT names of the pointings."""
        return tuple(f"FIELD-{i + 1}" for i in range(self.n_fields))


@dataclass(frozen=True)
class StarCatalogue:
    """The injected stars: position and flux in electrons per second in each filter (before the
    flat field, i.e. what a perfectly flat detector would collect)."""

    ra: np.ndarray
    dec: np.ndarray
    field: np.ndarray
    flux: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.ra)


@dataclass(frozen=True)
class ChipTruth:
    """The detector properties of one chip."""

    name: str
    bias_level: float
    bias: np.ndarray
    read_noise: float
    gain: float

    @property
    def read_noise_adu(self) -> float:
        """Read noise in ADU."""
        return self.read_noise / self.gain


@dataclass(frozen=True)
class ExposureTruth:
    """What went into one raw frame."""

    filename: str
    kind: str
    chip: str
    filter: str | None
    field: str | None
    dither: int | None
    obs_date: datetime.datetime
    exptime: float
    seeing_fwhm: float | None
    sky_level: float
    wcs: WCS | None
    cosmic_rays: CosmicRayHits


@dataclass
class Truth:
    """Everything the synthetic night was made from, for tests against known truth."""

    parameters: SkyParameters
    stars: StarCatalogue
    chips: dict[str, ChipTruth]
    flats: dict[tuple[str, str], np.ndarray]
    exposures: dict[str, ExposureTruth] = field(default_factory=dict)

    @property
    def hot_column(self) -> HotColumn | None:
        """The hot column injected into one raw bias (its frame: ``.filename``), if any."""
        return self.parameters.hot_column


@dataclass
class SyntheticFrame:
    """One raw frame: a FITS header and uint16 pixels, as a camera would write them."""

    filename: str
    kind: str
    header: fits.Header
    data: np.ndarray

    def write(self, directory: str | Path) -> Path:
        """Write the frame as `directory/filename` and return the path."""
        path = Path(directory) / self.filename
        fits.PrimaryHDU(data=self.data, header=self.header).writeto(path, overwrite=True)
        return path


@dataclass
class Night:
    """A generated night in memory."""

    frames: list[SyntheticFrame]
    truth: Truth


@dataclass
class WrittenNight:
    """A generated night written to disk."""

    paths: list[Path]
    truth: Truth


@dataclass(frozen=True)
class _FrameSpec:
    kind: str
    exposure: int
    chip: int
    filter: str | None
    field: int | None
    dither: int | None
    date: datetime.datetime
    exptime: float
    filename: str


def generate_night(parameters: SkyParameters | None = None) -> Night:
    """Make every raw frame of a night in memory, with its truth.

    Parameters
    ----------
    parameters
        What to make; `SkyParameters()` (the small test night) when None.
    """
    renderer = _NightRenderer(parameters or SkyParameters())
    frames = list(renderer.frames())
    return Night(frames, renderer.truth)


def write_night(parameters: SkyParameters | None, directory: str | Path) -> WrittenNight:
    """Make the night frame by frame, writing each as a FITS file in `directory` (created if
    needed) so that large nights never sit in memory at once."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    renderer = _NightRenderer(parameters or SkyParameters())
    paths = [frame.write(directory) for frame in renderer.frames()]
    return WrittenNight(paths, renderer.truth)


class _NightRenderer:
    """Builds the truth up front (cheap) and renders frames one at a time (expensive)."""

    def __init__(self, parameters: SkyParameters) -> None:
        self.p = parameters
        rows, cols = parameters.chip_shape
        ncols = math.ceil(math.sqrt(parameters.n_chips))
        nrows = math.ceil(parameters.n_chips / ncols)
        self.chip_offsets = [  # focal-plane position (x, y) of each chip centre, pixels
            (((i % ncols) - (ncols - 1) / 2) * (cols + parameters.chip_gap),
             ((i // ncols) - (nrows - 1) / 2) * (rows + parameters.chip_gap))
            for i in range(parameters.n_chips)
        ]
        self.half_extent = (ncols * cols + (ncols - 1) * parameters.chip_gap) / 2, (
            nrows * rows + (nrows - 1) * parameters.chip_gap) / 2
        night = datetime.datetime.fromisoformat(parameters.night).replace(tzinfo=datetime.UTC)
        self.evening = night + datetime.timedelta(hours=17)
        self.truth = Truth(parameters, self._stars(), self._chips(), self._flats())

    def _rng(self, *key: int) -> np.random.Generator:
        return np.random.default_rng([self.p.seed, *key])

    def _field_centre(self, index: int) -> tuple[float, float]:
        ra, dec = self.p.field_centre
        return ra + index * self.p.field_spacing / math.cos(math.radians(dec)), dec

    def _stars(self) -> StarCatalogue:
        p = self.p
        margin = 1.5 * p.dither_arcsec + 10.0  # arcsec beyond the mosaic edge
        half_x = self.half_extent[0] * p.pixel_scale + margin
        half_y = self.half_extent[1] * p.pixel_scale + margin
        count = round(p.star_density * (2 * half_x / 60) * (2 * half_y / 60))
        ras, decs, fields, fluxes = [], [], [], []
        for index in range(p.n_fields):
            rng = self._rng(1, index)
            xi = rng.uniform(-half_x, half_x, count) / 3600.0
            eta = rng.uniform(-half_y, half_y, count) / 3600.0
            tangent = _tan_wcs(self._field_centre(index), (0.0, 0.0), 1.0 / 3600.0, 0.0)
            ra, dec = tangent.wcs_pix2world(-xi * 3600.0, eta * 3600.0, 1)
            low, high = p.star_flux_range
            u = rng.uniform(0.0, 1.0, count)
            a = p.star_flux_slope  # N(>F) proportional to F**-a between low and high
            flux = (low**-a - u * (low**-a - high**-a)) ** (-1.0 / a)
            ras.append(ra)
            decs.append(dec)
            fields.append(np.full(count, index))
            fluxes.append((flux, rng.uniform(-0.6, 0.6, count)))
        colour = np.concatenate([c for _, c in fluxes])
        reference = np.concatenate([f for f, _ in fluxes])
        by_filter = {name: reference * 10 ** (-0.4 * colour * (i - (len(p.filters) - 1) / 2))
                     for i, name in enumerate(p.filters)}
        return StarCatalogue(np.concatenate(ras), np.concatenate(decs),
                             np.concatenate(fields), by_filter)

    def _chips(self) -> dict[str, ChipTruth]:
        chips = {}
        for i, name in enumerate(self.p.chip_names):
            rng = self._rng(2, i)
            level = self.p.bias_level * (1.0 + 0.1 * rng.uniform(-1, 1))
            chips[name] = ChipTruth(
                name=name,
                bias_level=float(level),
                bias=bias_structure(rng, self.p.chip_shape, level).astype(np.float32),
                read_noise=float(self.p.read_noise * (1.0 + 0.1 * rng.uniform(-1, 1))),
                gain=float(self.p.gain * (1.0 + 0.05 * rng.uniform(-1, 1))),
            )
        return chips

    def _focal_axes(self, chip: int) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = self.p.chip_shape
        cx, cy = self.chip_offsets[chip]
        return np.arange(cols) - (cols - 1) / 2 + cx, np.arange(rows) - (rows - 1) / 2 + cy

    def _flats(self) -> dict[tuple[str, str], np.ndarray]:
        flats = {}
        radius = math.hypot(*self.half_extent)
        for i, chip in enumerate(self.p.chip_names):
            focal_x, focal_y = self._focal_axes(i)
            for j, name in enumerate(self.p.filters):
                rng = self._rng(3, i, j)
                flats[(chip, name)] = flat_response(
                    rng, self.p.chip_shape, focal_x, focal_y, radius,
                    self.p.vignetting * (1.0 + 0.25 * j), self.p.pixel_response_rms,
                    self.p.bad_columns).astype(np.float32)
        return flats

    def _plan(self) -> Iterator[_FrameSpec]:
        p = self.p
        exposure = 0
        for n in range(p.n_biases):
            date = self.evening + datetime.timedelta(seconds=40 * n)
            for c, chip in enumerate(p.chip_names):
                yield _FrameSpec("bias", exposure, c, None, None, None, date, 0.0,
                                 f"bias_{chip}_{n + 1:02d}.fits")
            exposure += 1
        for j, name in enumerate(p.filters):
            for n in range(p.n_flats):
                date = self.evening + datetime.timedelta(minutes=20 + 10 * j, seconds=40 * n)
                for c, chip in enumerate(p.chip_names):
                    yield _FrameSpec("domeflat", exposure, c, name, None, None, date,
                                     p.flat_exptime, f"flat_{name}_{chip}_{n + 1:02d}.fits")
                exposure += 1
        date = self.evening + datetime.timedelta(hours=3)
        for f, field_name in enumerate(p.field_names):
            for name in p.filters:
                for d in range(p.n_dithers):
                    for c, chip in enumerate(p.chip_names):
                        yield _FrameSpec("science", exposure, c, name, f, d, date, p.exptime,
                                         f"sci_{field_name}_{name}_d{d + 1:02d}_{chip}.fits")
                    exposure += 1
                    date += datetime.timedelta(seconds=p.exptime + 45.0)

    def frames(self) -> Iterator[SyntheticFrame]:
        """Render the planned frames one by one, recording each one's truth."""
        for spec in self._plan():
            yield self._render(spec)

    def _exposure_wcs(self, spec: _FrameSpec, rotation: float) -> WCS:
        p = self.p
        ra0, dec0 = self._field_centre(spec.field or 0)
        dx, dy = _DITHER_PATTERN[(spec.dither or 0) % len(_DITHER_PATTERN)]
        scale = 1.0 + (spec.dither or 0) // len(_DITHER_PATTERN) * 0.37
        ra = ra0 + dx * scale * p.dither_arcsec / 3600.0 / math.cos(math.radians(dec0))
        dec = dec0 + dy * scale * p.dither_arcsec / 3600.0
        rows, cols = p.chip_shape
        cx, cy = self.chip_offsets[spec.chip]
        crpix = ((cols + 1) / 2 - cx, (rows + 1) / 2 - cy)
        return _tan_wcs((ra, dec), crpix, p.pixel_scale / 3600.0, rotation)

    def _render(self, spec: _FrameSpec) -> SyntheticFrame:
        p = self.p
        chip = self.truth.chips[p.chip_names[spec.chip]]
        exposure_rng = self._rng(4, spec.exposure)  # shared by the chips of one exposure
        rng = self._rng(5, spec.exposure, spec.chip)
        shape = p.chip_shape
        electrons = np.zeros(shape)
        seeing = sky = None
        wcs = None
        if spec.kind == "domeflat":
            level = p.dome_level * exposure_rng.uniform(0.9, 1.1)
            electrons = level * self.truth.flats[(chip.name, spec.filter)].astype(np.float64)  # type: ignore[index]  # flats have a filter
            sky = level
        elif spec.kind == "science":
            seeing = p.seeing_fwhm * exposure_rng.uniform(0.9, 1.2)
            rotation = exposure_rng.normal(0.0, p.rotation_rms_deg)
            sky = p.sky_rates[p.filters.index(spec.filter)] * p.exptime * exposure_rng.uniform(
                0.95, 1.05)
            wcs = self._exposure_wcs(spec, rotation)
            stars = self.truth.stars
            x, y = wcs.wcs_world2pix(stars.ra, stars.dec, 0)
            near = (x > -20) & (x < shape[1] + 20) & (y > -20) & (y < shape[0] + 20)
            sigma = seeing / p.pixel_scale / FWHM_PER_SIGMA
            electrons = sky + render_stars(shape, x[near], y[near],
                                           stars.flux[spec.filter][near] * p.exptime, sigma)  # type: ignore[index]
            electrons *= self.truth.flats[(chip.name, spec.filter)]  # type: ignore[index]  # science: a filter
        cosmic_time = spec.exptime + p.readout_time
        hits = cosmic_ray_tracks(rng, shape, p.cosmic_ray_rate * shape[0] * shape[1] * cosmic_time)
        if spec.kind == "domeflat":  # invisible under the lamp; keep the truth honest
            hits = CosmicRayHits(*(np.zeros(0, dtype=a.dtype) for a in
                                   (hits.rows, hits.cols, hits.event, hits.deposit)))
        signal = rng.poisson(np.clip(electrons, 0, None)).astype(np.float64)
        signal += hits.image(shape) + chip.read_noise * rng.standard_normal(shape)
        adu = chip.bias + signal / chip.gain
        if p.hot_column is not None:
            adu = p.hot_column.apply(spec.filename, adu)
        data = np.clip(np.rint(adu), 0, p.saturation).astype(np.uint16)
        header = self._header(spec, chip, wcs)
        self.truth.exposures[spec.filename] = ExposureTruth(
            spec.filename, spec.kind, chip.name, spec.filter,
            None if spec.field is None else p.field_names[spec.field], spec.dither, spec.date,
            spec.exptime, seeing, float(sky or 0.0), wcs, hits)
        return SyntheticFrame(spec.filename, spec.kind, header, data)

    def _header(self, spec: _FrameSpec, chip: ChipTruth, wcs: WCS | None) -> fits.Header:
        p = self.p
        image_type = {"bias": "BIAS", "domeflat": "DOMEFLAT", "science": "OBJECT"}[spec.kind]
        date = Time(spec.date)
        cards: list[tuple[str, object, str]] = [
            ("ORIGIN", "awlineage synthetic sky", "generated, not observed"),
            ("TELESCOP", "SYNTEL", "telescope"),
            ("INSTRUME", p.instrument, "instrument"),
            ("DETECTOR", chip.name, "detector name"),
            ("CHIPID", p.chip_names.index(chip.name) + 1, "detector number"),
            ("IMAGETYP", image_type, "type of exposure"),
            ("OBSTYPE", image_type, "type of exposure"),
            ("OBJECT", p.field_names[spec.field] if spec.field is not None else image_type,
             "target"),
        ]
        if spec.filter is not None:
            cards.append(("FILTER", spec.filter, "filter name"))
        cards += [
            ("EXPTIME", spec.exptime, "[s] exposure time"),
            ("DATE-OBS", date.isot, "UTC start of exposure"),
            ("MJD-OBS", date.mjd, "[d] MJD start of exposure"),
            ("GAIN", round(chip.gain, 4), "[e-/ADU] conversion gain"),
            ("RDNOISE", round(chip.read_noise, 3), "[e-] read noise"),
            ("SATURATE", p.saturation, "[ADU] saturation level"),
            ("BUNIT", "ADU", "pixel unit"),
            ("AWLSEED", p.seed, "seed of the synthetic sky"),
        ]
        if spec.dither is not None:
            cards.append(("DITHER", spec.dither + 1, "dither position"))
        header = fits.Header(cards)
        if wcs is not None:
            ra, dec = wcs.wcs.crval
            header["RA"] = (float(ra), "[deg] pointing of the mosaic centre")
            header["DEC"] = (float(dec), "[deg] pointing of the mosaic centre")
            header.update(_wcs_cards(wcs))
        return header


_DITHER_PATTERN = [(0.0, 0.0), (1.0, 0.5), (-0.5, 1.0), (-1.0, -0.5), (0.5, -1.0),
                   (1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]


def _tan_wcs(centre: tuple[float, float], crpix: tuple[float, float], scale: float,
             rotation_deg: float) -> WCS:
    """A TAN WCS, east left and north up before the rotation; crpix is 1-based."""
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.cunit = ["deg", "deg"]
    wcs.wcs.crval = list(centre)
    wcs.wcs.crpix = list(crpix)
    theta = math.radians(rotation_deg)
    wcs.wcs.cd = scale * np.array([[-math.cos(theta), math.sin(theta)],
                                   [math.sin(theta), math.cos(theta)]])
    wcs.wcs.radesys = "ICRS"
    wcs.wcs.equinox = 2000.0
    wcs.wcs.set()
    return wcs


def _wcs_cards(wcs: WCS) -> fits.Header:
    """The WCS as the CD-matrix keywords raw frames usually carry."""
    header = fits.Header()
    header["RADESYS"] = "ICRS"
    header["EQUINOX"] = 2000.0
    for axis in (1, 2):
        header[f"CTYPE{axis}"] = wcs.wcs.ctype[axis - 1]
        header[f"CUNIT{axis}"] = "deg"
        header[f"CRVAL{axis}"] = float(wcs.wcs.crval[axis - 1])
        header[f"CRPIX{axis}"] = float(wcs.wcs.crpix[axis - 1])
    for i in (1, 2):
        for j in (1, 2):
            header[f"CD{i}_{j}"] = float(wcs.wcs.cd[i - 1, j - 1])
    return header
