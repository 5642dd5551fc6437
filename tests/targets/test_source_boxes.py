"""Each source's payload box covers every pixel sep reads for its position, flux and Kron
radius: a pixel raised just outside the box changes nothing of that source, while the
outermost pixel sep reads for the Kron radius (inside the box) does. Measured with the same
detections on the perturbed image, on the synthetic night's coadd and on real frames."""

from __future__ import annotations

import numpy as np
import pytest
import sep
from astropy.io import fits

from targets.aperture_correction import measure_correction
from targets.extraction import (
    KRON_REACH,
    ExtractionParameters,
    _measure,
    _own_totals,
    aperture_radius,
)
from targets.real_files import REAL_FILES

RAISE = 20.0
"""How far a pixel is raised, in units of its noise."""
MEASURED = ("x", "y", "flux", "flux_err", "kron_radius", "flags")


def _detected(data: np.ndarray, weight: np.ndarray | None):
    """The inputs of the measurement step, as extraction prepares them: the background-
    subtracted image, the noise, the mask, sep's detections and the background map."""
    parameters = ExtractionParameters()
    image = np.ascontiguousarray(data, dtype=np.float64)
    mask = ~np.isfinite(image)
    if weight is not None:
        mask |= ~(weight > 0)
    image[mask] = 0.0
    box = min(parameters.background_box, *image.shape)
    background = sep.Background(image, mask=mask, bw=box, bh=box, fw=3, fh=3)
    back = background.back()
    image -= back
    if weight is None:
        noise = np.ascontiguousarray(background.rms())  # a local noise map
    else:
        noise = np.where(mask, 1.0, 1.0 / np.sqrt(np.where(mask, 1.0, weight)))
    objects = sep.extract(image, parameters.threshold, err=noise, mask=mask,
                          minarea=parameters.min_area, clean=True)
    return image, noise, mask, objects, back


def _outside_pixels(source: np.void, row: int, col: int) -> list[tuple[int, int]]:
    """The pixels just beyond each edge of the source's box, on the lines through its
    detected centre (where sep's circles and ellipses reach furthest)."""
    return [(row, int(source["xmax"]) + 1), (row, int(source["xmin"]) - 1),
            (int(source["ymax"]) + 1, col), (int(source["ymin"]) - 1, col)]


def _outermost_kron_pixel(obj: np.void, source: np.void, mask: np.ndarray
                          ) -> tuple[int, int] | None:
    """The unmasked pixel of the box farthest out in the ellipse sep sums the Kron radius in
    (6 a x 6 b around the detected position, pixel centres within it)."""
    a, b = max(float(obj["a"]), 0.1), min(max(float(obj["b"]), 0.1), max(float(obj["a"]), 0.1))
    theta = float(obj["theta"])
    cxx = np.cos(theta) ** 2 / a ** 2 + np.sin(theta) ** 2 / b ** 2
    cyy = np.sin(theta) ** 2 / a ** 2 + np.cos(theta) ** 2 / b ** 2
    cxy = 2 * np.cos(theta) * np.sin(theta) * (1 / a ** 2 - 1 / b ** 2)
    rows, cols = np.mgrid[source["ymin"]:source["ymax"] + 1, source["xmin"]:source["xmax"] + 1]
    dx, dy = cols - obj["x"], rows - obj["y"]
    r2 = cxx * dx * dx + cyy * dy * dy + cxy * dx * dy
    usable = (r2 <= KRON_REACH ** 2 * 0.98) & ~mask[rows, cols]
    if not usable.any():
        return None
    best = np.argmax(np.where(usable, r2, -1.0))
    return int(rows.flat[best]), int(cols.flat[best])


def _remeasured(image, noise, mask, obj, back, pixel) -> np.void:
    perturbed = image.copy()
    perturbed[pixel] += RAISE * noise[pixel]
    return _measure(perturbed, noise, mask, obj, back, ExtractionParameters())[0]


def _check_boxes(image, noise, mask, objects, back, limit: int = 150) -> dict[str, int]:
    sources = _measure(image, noise, mask, objects, back, ExtractionParameters())
    rows, cols = image.shape
    counts = {"sources": 0, "outside": 0, "outside changed": 0, "inside": 0,
              "inside changed": 0}
    order = np.argsort(-sources["flux"])[:limit]  # the brightest: the largest boxes
    for i in order:
        obj, source = objects[i:i + 1], sources[i]
        counts["sources"] += 1
        row, col = int(np.rint(obj["y"][0])), int(np.rint(obj["x"][0]))
        for pixel in _outside_pixels(source, row, col):
            if not (0 <= pixel[0] < rows and 0 <= pixel[1] < cols) or mask[pixel]:
                continue
            after = _remeasured(image, noise, mask, obj, back, pixel)
            counts["outside"] += 1
            if any(after[name] != source[name] for name in MEASURED):
                counts["outside changed"] += 1
        inner = _outermost_kron_pixel(objects[i], source, mask)
        if inner is not None:
            counts["inside"] += 1
            after = _remeasured(image, noise, mask, obj, back, inner)
            if after["kron_radius"] != source["kron_radius"]:
                counts["inside changed"] += 1
    return counts


def _assert_boxes_cover(counts: dict[str, int]) -> None:
    assert counts["sources"] >= 20, counts
    assert counts["outside"] >= 3 * counts["sources"], counts
    assert counts["outside changed"] == 0, counts
    # the test can fail: a pixel inside that sep reads does change the measurement
    assert counts["inside changed"] >= 0.9 * counts["inside"] > 0, counts


def test_a_pixel_just_outside_a_source_box_does_not_change_its_measurement(direct_run):
    key = sorted(direct_run.coadds)[0]
    coadd = direct_run.coadds[key]
    _assert_boxes_cover(_check_boxes(*_detected(coadd.data, coadd.weight)))


@pytest.mark.parametrize("name, extension", [("hst_hdfs", 1), ("dss_m13", 0)])
def test_source_boxes_cover_what_was_measured_on_real_frames(name, extension):
    data = fits.getdata(REAL_FILES[name].path(), extension).astype(np.float64)
    _assert_boxes_cover(_check_boxes(*_detected(data, None)))


def _totals(image, noise, mask, objects, segmentation, back, correction) -> np.ndarray:
    """The sources as extraction leaves them (the aperture correction and each source's
    own total applied), with what is measured over the whole image held as given: the
    detections and their segmentation, the background map, the curve of growth, no
    correlated-noise factors."""
    parameters = ExtractionParameters()
    sources = _measure(image, noise, mask, objects, back, parameters)
    radius = aperture_radius(sources["kron_radius"], sources["a"], sources["b"], parameters)
    sources["aperture_correction"] = correction.factor(radius)
    sources["flux"] *= sources["aperture_correction"]
    sources["flux_err"] *= sources["aperture_correction"]
    _own_totals(image, noise, mask, segmentation, sources, radius, correction,
                np.array([0.0]), np.array([1.0]), parameters)
    return sources


def test_a_source_box_covers_the_circles_its_own_total_is_measured_in(direct_run):
    """A source's flux may come from its own light in a circle beyond the pixels of its
    measurement (`_own_totals`), so its payload box covers those circles: a pixel just
    outside the box changes nothing of the source, while pixels that only those circles
    read (inside the box, outside the measurement's own reach) change some totals."""
    key = sorted(direct_run.coadds)[0]
    coadd = direct_run.coadds[key]
    image, noise, mask, _, back = _detected(coadd.data, coadd.weight)
    parameters = ExtractionParameters()
    objects, segmentation = sep.extract(image, parameters.threshold, err=noise, mask=mask,
                                        minarea=parameters.min_area, clean=True,
                                        segmentation_map=True)
    measured = _measure(image, noise, mask, objects, back, parameters)
    correction = measure_correction(image, mask, segmentation, measured,
                                    total_radius=parameters.total_radius)
    sources = _totals(image, noise, mask, objects, segmentation, back, correction)
    rows, cols = image.shape
    reach = float(correction.radii.max())  # the largest circle of a source's own light
    beyond = np.flatnonzero((np.ceil(sources["x"] - reach) < measured["xmin"])
                            | (np.floor(sources["x"] + reach) > measured["xmax"])
                            | (np.ceil(sources["y"] - reach) < measured["ymin"])
                            | (np.floor(sources["y"] + reach) > measured["ymax"]))
    raised = 50 * RAISE  # bright enough to make a faint source's circle count
    outside = outside_changed = inside = inside_changed = 0
    for i in beyond[np.argsort(-sources["flux"][beyond])][:40]:
        row, col = int(np.rint(objects["y"][i])), int(np.rint(objects["x"][i]))
        for pixel in _outside_pixels(sources[i], row, col):
            if not (0 <= pixel[0] < rows and 0 <= pixel[1] < cols) or mask[pixel]:
                continue
            perturbed = image.copy()
            perturbed[pixel] += raised * noise[pixel]
            after = _totals(perturbed, noise, mask, objects, segmentation, back, correction)[i]
            outside += 1
            outside_changed += any(after[name] != sources[i][name] for name in MEASURED)
        for pixel in _outside_pixels(measured[i], row, col):  # the measurement's own reach
            if not (0 <= pixel[0] < rows and 0 <= pixel[1] < cols) or mask[pixel] \
                    or segmentation[pixel] not in (0, i + 1):
                continue
            perturbed = image.copy()
            perturbed[pixel] += raised * noise[pixel]
            after = _totals(perturbed, noise, mask, objects, segmentation, back, correction)[i]
            inside += 1
            inside_changed += after["flux"] != sources[i]["flux"]
    assert correction.method != "none" and outside >= 20, (correction.method, outside)
    assert outside_changed == 0, (outside_changed, outside)
    assert inside_changed > 0, inside  # the test can fail: those pixels are read
