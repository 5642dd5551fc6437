"""The brightest star's cutout gallery in a real browser: every thumbnail loads under the
viewer's Content-Security-Policy, with its region outline drawn over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from awlineage import select
from tests.webviewer.browser import until
from tests.webviewer.demo_objects import demo_session

ALL_LOADED = ("[...document.querySelectorAll('ol.gallery img')].every(i => i.complete && "
              "i.naturalWidth > 0)")


@pytest.fixture(scope="module")
def star(demo_folder: Path) -> int:
    from targets.source_lists import Source

    with demo_session(demo_folder):
        found = select(Source.flags == 0).order_by(Source.flux.desc()).first()
        assert found is not None
        return found.object_id


def test_every_thumbnail_of_the_brightest_star_loads(demo_url, page, shot, star) -> None:
    answer = page.goto(f"{demo_url}/obj/{star}/gallery")
    assert answer is not None and answer.status == 200
    images = page.evaluate("fetch(location.href + '?format=json').then(r => r.json())")
    until(page, ALL_LOADED)
    count = page.locator("ol.gallery li.cutout").count()
    assert count == len(images["images"]) > 10
    assert page.locator("ol.gallery li.cutout svg.overlay rect.region").count() >= count
    first = page.locator("ol.gallery li.cutout").first
    box, outline = first.locator("img").bounding_box(), first.locator("svg").bounding_box()
    assert box is not None and outline is not None
    assert abs(box["width"] - outline["width"]) < 1.5 and box["width"] > 100
    labels = page.locator("ol.gallery .label a.object").all_inner_texts()
    assert labels[0].startswith("CoaddedRegriddedFrame")
    assert any(label.startswith("BiasFrame") for label in labels)
    page.screenshot(path=shot("gallery"), full_page=True)
