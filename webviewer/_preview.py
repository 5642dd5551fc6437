"""``/obj/<id>/preview.png``: a grey PNG of a 2-D image HDU, scaled between limits with a
stretch (``?stretch=linear|asinh|log|sqrt&limits=zscale|minmax|99.5``, default z-scale and
linear; see `webviewer._image_stretch`), binned down to `Limits.preview_pixels` (a block mean,
NaN-safe), drawn with row 0 at the bottom as ds9 shows FITS images, and cached: objects are
immutable, so a rendered preview never goes stale."""

from __future__ import annotations

import hashlib
import math
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import get
from webviewer._image_stretch import Rendering, rendering_param, to_grey
from webviewer._imagedata import hdu_param, read_image
from webviewer._params import int_param, object_id
from webviewer._png import encode_grey_png
from webviewer._respond import binary_page
from webviewer._viewer import Viewer

RENDERING = "2"
"""The version of how previews are drawn; part of the ETag (with the stretch and limits), so
a new way of drawing is a new tag."""

MIN_SIZE = 16
"""The smallest longest side a request may ask for (``size``)."""


def binning(shape: tuple[int, int], size: int) -> int:
    """The block size that brings an image of `shape` down to at most `size` pixels on its
    longest side."""
    return max(1, math.ceil(max(shape) / size))


def bin_image(data: np.ndarray, factor: int) -> np.ndarray:
    """Means of `factor` x `factor` blocks, ignoring NaNs; the last blocks of a side that
    `factor` does not divide are padded with NaN, so the result has ``ceil(side / factor)``
    pixels on each side."""
    if factor == 1:
        return data
    rows, cols = data.shape
    padded = np.full((math.ceil(rows / factor) * factor, math.ceil(cols / factor) * factor),
                     np.nan, dtype=np.float32)
    padded[:rows, :cols] = data
    blocks = padded.reshape(padded.shape[0] // factor, factor, padded.shape[1] // factor, factor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a block of NaNs stays NaN
        return np.nanmean(blocks, axis=(1, 3))


def scale_to_grey(data: np.ndarray, rendering: Rendering | None = None) -> np.ndarray:
    """8-bit grey of an image: limits of its finite pixels and a stretch (default z-scale
    and linear); non-finite pixels (and an image with none finite) are black."""
    return to_grey(data, rendering or Rendering())


CacheKey = tuple[int, int | None, int, str]
"""(object id, requested hdu, size, rendering key)."""


@dataclass(frozen=True)
class Preview:
    """A rendered preview."""

    png: bytes
    etag: str
    binning: int
    hdu: int
    shape: tuple[int, int]


class PreviewCache:
    """Rendered previews by (object id, requested hdu, size), least recently used first out,
    holding at most `max_bytes` of PNG; safe across the app's worker threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[CacheKey, Preview] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: CacheKey) -> Preview | None:
        """The preview under `key`, marked as just used; None if not cached."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: CacheKey, preview: Preview) -> None:
        """Keep `preview`, dropping the least recently used ones past the byte limit (a
        preview larger than the whole cache is not kept)."""
        if len(preview.png) > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.size -= len(old.png)
            self._entries[key] = preview
            self.size += len(preview.png)
            while self.size > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self.size -= len(dropped.png)

    def __len__(self) -> int:
        return len(self._entries)


_cache_lock = threading.Lock()


def preview_cache(request: Request, viewer: Viewer) -> PreviewCache:
    """The app's preview cache (made on first use)."""
    state = request.app.state
    with _cache_lock:
        cache = getattr(state, "preview_cache", None)
        if cache is None:
            cache = state.preview_cache = PreviewCache(viewer.limits.preview_cache_bytes)
    return cache


def preview_url(object_id: int, hdu: int, size: int | None = None,
                rendering: Rendering | None = None) -> str:
    """The URL of a preview (the default rendering is left out of it)."""
    url = f"/obj/{int(object_id)}/preview.png?hdu={int(hdu)}" + (
        f"&size={int(size)}" if size is not None else "")
    if rendering is not None and rendering != Rendering():
        url += f"&stretch={rendering.stretch}&limits={rendering.limits}"
    return url


def render_preview(object_id: int, hdu: int | None, size: int,
                   rendering: Rendering | None = None) -> Preview:
    """Read and draw the preview of HDU `hdu` of object `object_id` (the first 2-D image HDU
    when `hdu` is None); the session must be active."""
    obj = get(object_id)
    chosen, data = read_image(obj, hdu)
    factor = binning(chosen.shape, size)
    rendering = rendering or Rendering()
    grey = scale_to_grey(bin_image(data, factor), rendering)[::-1]  # FITS row 0 at the bottom
    # read_image read its file, so it is a DataObject
    tag = hashlib.sha256(f"{obj.content_hash}:"  # type: ignore[attr-defined]
                         f"{chosen.index}:{size}:{rendering.key}:{RENDERING}".encode())
    return Preview(encode_grey_png(np.ascontiguousarray(grey)), f'"{tag.hexdigest()[:32]}"',
                   factor, chosen.index, chosen.shape)


@binary_page
def preview(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/preview.png?hdu=N&size=S&stretch=&limits=``: the PNG preview of an image
    HDU, its longest side at most `size` (default and limit `Limits.preview_pixels`); the
    binning factor is in the ``X-Preview-Binning`` header."""
    oid = object_id(request)
    hdu = hdu_param(request)
    size = int_param(request, "size", viewer.limits.preview_pixels, low=MIN_SIZE,
                     high=viewer.limits.preview_pixels)
    rendering = rendering_param(request)
    key = (oid, hdu, size, rendering.key)
    cache = preview_cache(request, viewer)
    found = cache.get(key)
    if found is None:
        found = render_preview(oid, hdu, size, rendering)
        cache.put(key, found)
    headers = {
        "Cache-Control": "public, max-age=31536000, immutable",
        "ETag": found.etag,
        "X-Preview-Binning": str(found.binning),
        "X-Preview-HDU": str(found.hdu),
        "X-Image-Shape": f"{found.shape[0]}x{found.shape[1]}",
    }
    if found.etag in {t.strip() for t in request.headers.get("if-none-match", "").split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(found.png, media_type="image/png", headers=headers)


routes = [Route("/obj/{object_id}/preview.png", preview, methods=["GET"])]
