"""The photometry of given apertures (`targets.compare.aperture_fluxes`) that the real-data
checks' flux ratio rests on."""

from __future__ import annotations

import numpy as np
import pytest

from targets.compare import aperture_fluxes


def test_aperture_fluxes_sum_an_ellipse_given_by_its_quadratic_form() -> None:
    image = np.full((80, 80), 2.0)
    image[30:50, 30:50] += 1.0  # a square source on a flat background of 2
    a, b, theta = 6.0, 3.0, 0.4
    cos, sin = np.cos(theta), np.sin(theta)
    cxx = cos**2 / a**2 + sin**2 / b**2
    cyy = sin**2 / a**2 + cos**2 / b**2
    cxy = 2.0 * cos * sin * (1.0 / a**2 - 1.0 / b**2)
    flux = aperture_fluxes(image, np.array([40.0]), np.array([40.0]), np.array([cxx]),
                           np.array([cyy]), np.array([cxy]), background_box=16)
    assert flux[0] == pytest.approx(np.pi * a * b, rel=0.05)  # the background is removed
