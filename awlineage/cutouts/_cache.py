"""What a cutout server keeps between requests, since stored objects, their files and their
lineage never change: each image's header, shape and WCS, the verified path of its file, the
parent links of the objects walked, and the plans of recent requests (`CutoutCache`, bounded,
least recently used dropped first).

Measured reason (the demo's brightest star, 17 arrays, warm): each file was opened two or
three times per request, its header parsed and its WCS built each time, and
`DataObject.open_fits` hashes the whole file on every open to check it; with the lineage
walked anew, a request took 0.3-0.4 s. A file is now verified once (by `open_fits`) and later
opened straight from its path while its inode, size and modification time are the ones it
had when it was checked, so a file replaced on disk is checked anew.

With the closure index on, the first read of an object's parents reads those of everything it
was made from as well (one index query, one batch), so a cold request's walk up the lineage
finds every later generation kept instead of reading one batch per generation.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from astropy.io import fits
from astropy.wcs import WCS

from awlineage.cutouts._errors import CutoutUsageError
from awlineage.cutouts._wcs import read_wcs
from awlineage.database import Database
from awlineage.lineage import (
    ClosureIndexOffError,
    Edge,
    closure_ancestors,
    closure_index_present,
    parent_edges,
)
from awlineage.persistence import DataObject

PRODUCT_ATTRIBUTES = frozenset({"awlineage.ProcessRun.outputs"})
"""The links `parent_edges` follows backwards: from a run to what it made."""
PRELOAD_OBJECTS = 2_000
"""The most ancestors whose parents one read keeps ahead of the walk (with the index on)."""


@dataclass(frozen=True)
class ImageInfo:
    """One 2-d (or other) image array of a stored file, as its header describes it."""

    header: fits.Header
    """The HDU's header (shared: copy it before changing it)."""
    shape: tuple[int, ...]
    """The array's shape, numpy's order."""
    wcs: WCS | None
    """The header's full WCS when it has celestial axes, else None (a bias, a flat)."""


def celestial_wcs(header: fits.Header, hdul: fits.HDUList | None = None) -> WCS | None:
    """The header's WCS when it has celestial axes, else None (a bias, a flat).

    Read as astropy reads it: a DSS plate solution, SIP, TPV, and with `hdul` the distortion
    lookup tables kept in other HDUs.

    Parameters
    ----------
    header : astropy.io.fits.Header
        An HDU's header.
    hdul : astropy.io.fits.HDUList or None, optional
        The file, for lookup tables (``WCSDVARR``, ``D2IMARR`` extensions).

    Returns
    -------
    astropy.wcs.WCS or None
        The WCS, or None when it has no celestial axes.
    """
    wcs = read_wcs(header, hdul)
    return wcs if wcs.has_celestial else None


_Signature = tuple[int, int, int]
_FileKey = tuple[int, str]


class CutoutCache:
    """What cutout requests read about stored images, kept between requests.

    Headers, shapes and WCSs of stored images by (object id, content hash, HDU), the verified
    local path of each file, request plans, and objects' parent links. Safe across threads;
    one per server (the viewer) or one per request (the default).

    Parameters
    ----------
    size
        The most entries of each kind kept (parent links: ten times as many); the least
        recently used go first.
    """

    def __init__(self, size: int = 1_000) -> None:
        self.size = size
        self._infos: OrderedDict[tuple[int, str, int | str], ImageInfo] = OrderedDict()
        self._paths: OrderedDict[_FileKey, tuple[Path, _Signature]] = OrderedDict()
        self._parents: OrderedDict[int, list[Edge]] = OrderedDict()
        self._plans: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def parents(self, db: Database, ids: list[int]) -> list[Edge]:
        """`parent_edges` of `ids`, read once per object (an object's parents never
        change)."""
        found: list[Edge] = []
        missing = []
        with self._lock:
            for oid in ids:
                known = self._parents.get(oid)
                if known is None:
                    missing.append(oid)
                else:
                    self._parents.move_to_end(oid)
                    found.extend(known)
        if missing:
            by_object: dict[int, list[Edge]] = {oid: [] for oid in self._ahead(db, missing)}
            for edge in parent_edges(db, by_object, db.registered_classes()):
                # A run's link to what it made leads from the object (its target) to the run.
                made = edge.attribute in PRODUCT_ATTRIBUTES
                by_object[edge.target if made else edge.source].append(edge)
            with self._lock:
                self._parents.update(by_object)
                _trim(self._parents, self.size * 10)
            found.extend(edge for oid in missing for edge in by_object[oid])
        return found

    def _ahead(self, db: Database, missing: list[int]) -> list[int]:
        """`missing`, and when a walk starts at one object and the index is on, the ancestors
        of it not kept yet (a bounded number, the cache's room allowing)."""
        if len(missing) != 1 or not closure_index_present(db):
            return missing
        try:
            ancestors = closure_ancestors(db, missing[0])
        except ClosureIndexOffError:  # turned off since it was seen on
            return missing
        if len(ancestors) > min(PRELOAD_OBJECTS, self.size * 5):
            return missing
        with self._lock:
            return missing + [oid for oid in ancestors if oid not in self._parents]

    def plan(self, key: Hashable) -> Any:
        """The plan kept under `key`, or None."""
        with self._lock:
            found = self._plans.get(key)
            if found is not None:
                self._plans.move_to_end(key)
            return found

    def keep_plan(self, key: Hashable, plan: Any) -> None:
        """Keep `plan` under `key`."""
        with self._lock:
            self._plans[key] = plan
            _trim(self._plans, self.size)

    def info(self, image: DataObject, hdu: int | str) -> ImageInfo:
        """Header, shape and WCS of `hdu` of `image` (read on first use).

        Raises
        ------
        CutoutUsageError
            When the file has no such HDU or it holds no array.
        """
        key = (image.object_id, str(image.content_hash), hdu)
        with self._lock:
            found = self._infos.get(key)
            if found is not None:
                self._infos.move_to_end(key)
                return found
        with self.open(image) as hdul:
            try:  # `in` says yes to any number
                chosen = hdul[hdu] if not isinstance(hdu, int) or hdu >= 0 else None
            except (IndexError, KeyError):
                chosen = None
            if chosen is None:
                raise CutoutUsageError(f"{_name(image)} has no HDU {hdu!r}")
            header = chosen.header.copy()
            shape = tuple(int(n) for n in (chosen.shape or ()))
            wcs = celestial_wcs(header, hdul) if len(shape) == 2 else None
        found = ImageInfo(header, shape, wcs)
        with self._lock:
            self._infos[key] = found
            _trim(self._infos, self.size)
        return found

    def open(self, image: DataObject) -> Any:
        """`image`'s file as an HDU list, not memory-mapped (astropy maps no scaled data, and
        a section reads only the rows it needs either way): checked against its content hash
        on first use, later opened from the same path while the file is unchanged."""
        key = (image.object_id, str(image.content_hash))
        with self._lock:
            known = self._paths.get(key)
        signature: _Signature | None
        if known is not None:
            path, signature = known
            if _signature(path) == signature:
                return fits.open(path, memmap=False, mode="readonly")
        hdul = image.open_fits(memmap=False)
        name = hdul.filename()
        if name is not None:
            path = Path(name)
            # The check and this stat are a moment apart: files on a data server are written
            # once, and a file replaced later has another signature and is checked anew.
            signature = _signature(path)
            if signature is not None:
                with self._lock:
                    self._paths[key] = (path, signature)
                    _trim(self._paths, self.size)
        return hdul


def _signature(path: Path) -> _Signature | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _trim(entries: OrderedDict[Any, Any], size: int) -> None:
    while len(entries) > size:
        entries.popitem(last=False)


def _name(image: DataObject) -> str:
    return f"{type(image).__name__} {image.object_id}"
