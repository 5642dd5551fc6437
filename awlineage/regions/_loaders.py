"""Loading the stored input arrays of a recorded operator call, for black-box re-execution:
registered loaders first (newest first), then a DataObject's FITS HDU."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from awlineage.persistence import DataObject, DBObject
from awlineage.regions._errors import RegionError

ArrayLoader = Callable[[DBObject, "int | str"], Any]
_loaders: list[ArrayLoader] = []


def register_array_loader(loader: ArrayLoader) -> None:
    """Let `loader(obj, hdu)` supply arrays; it returns the array, or None to pass.

    Parameters
    ----------
    loader : callable
        Called with a `DBObject` and an HDU (int or name); returns the array, or None to let
        the next loader answer.
    """
    _loaders.append(loader)


def unregister_array_loader(loader: ArrayLoader) -> None:
    """Stop using `loader`.

    Parameters
    ----------
    loader : callable
        A loader given to `register_array_loader`; nothing happens when it is not registered.
    """
    if loader in _loaders:
        _loaders.remove(loader)


def parse_hdu(array: str) -> int | str:
    """The HDU of an array name (``hdu:0`` -> 0, ``hdu:SCI`` -> ``'SCI'``)."""
    value = array.removeprefix("hdu:")
    return int(value) if value.lstrip("-").isdigit() else value


def can_load(obj: DBObject, array: str) -> bool:
    """Whether `load_array` could give `array` of `obj` again (a black-box call needs it):
    a stored HDU of a DataObject with a file, or one a registered loader supplies."""
    if not array.startswith("hdu:"):
        return False
    if isinstance(obj, DataObject) and obj.filename:
        return True
    hdu = parse_hdu(array)
    return any(loader(obj, hdu) is not None for loader in reversed(_loaders))


def load_array(obj: DBObject, array: str) -> np.ndarray:
    """The contents of `array` of `obj`, or raise saying why it cannot be had."""
    if not array.startswith("hdu:"):
        raise RegionError(f"{array} of {type(obj).__name__} {obj.object_id} is an in-memory "
                          "intermediate; it was never stored and cannot be reloaded")
    hdu = parse_hdu(array)
    for loader in reversed(_loaders):
        data = loader(obj, hdu)
        if data is not None:
            return np.asarray(data)
    if isinstance(obj, DataObject) and obj.filename:
        with obj.open_fits() as hdus:
            data = hdus[hdu].data
            if data is None:
                raise RegionError(f"{type(obj).__name__} {obj.object_id}: HDU {hdu} of "
                                  f"{obj.filename} holds no data")
            return np.array(data)
    raise RegionError(f"no array loader for {type(obj).__name__} {obj.object_id} HDU {hdu}: "
                      "store it as a DataObject, or register_array_loader()")
