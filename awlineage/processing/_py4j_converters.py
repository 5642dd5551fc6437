"""PySpark's numpy converters for py4j, without the import of pandas and pyarrow they cost.

``pyspark.sql.types`` registers converters that py4j asks about every argument of every call
into the JVM (``can_convert``). PySpark 4's two numpy converters (`NumpyScalarConverter`,
`NumpyArrayConverter`) answer by importing ``pyspark.testing.utils`` to read its
``have_numpy``, and that module imports pandas and pyarrow (and looks for a dozen test
packages) to learn their versions: the Spark driver's first call into the JVM, while the
`SparkContext` starts, loaded some 900 modules it never uses, 60 MB of the driver's memory
for the whole make (proportional set size of the medium demo night's driver: 210 MB with
them, measured beside a Python that imports the same pipeline).

`replace_numpy_converters` puts in their place converters that answer the same question
from ``sys.modules``: an argument can only be a numpy object if numpy was imported. How they
convert is PySpark's own (subclasses).
"""

from __future__ import annotations

import functools
import sys
from typing import Any


def _numpy_type(name: str) -> Any:
    """``numpy.<name>``, or None when numpy has not been imported (then no argument is a
    numpy object)."""
    numpy = sys.modules.get("numpy")
    return None if numpy is None else getattr(numpy, name)


@functools.cache
def _converter_classes() -> dict[str, type]:
    """Our converters by the name of PySpark's class they replace; empty when PySpark has
    neither class (another version)."""
    from pyspark.sql import types

    classes: dict[str, type] = {}
    scalar = getattr(types, "NumpyScalarConverter", None)
    array = getattr(types, "NumpyArrayConverter", None)
    if isinstance(scalar, type):
        class NumpyScalarConverter(scalar):  # type: ignore[misc,valid-type]
            """PySpark's, with a `can_convert` that imports nothing."""

            def can_convert(self, obj: Any) -> bool:
                generic = _numpy_type("generic")
                return generic is not None and isinstance(obj, generic)

        classes[scalar.__name__] = NumpyScalarConverter
    if isinstance(array, type):
        class NumpyArrayConverter(array):  # type: ignore[misc,valid-type]
            """PySpark's, with a `can_convert` that imports nothing."""

            def can_convert(self, obj: Any) -> bool:
                ndarray = _numpy_type("ndarray")
                return ndarray is not None and isinstance(obj, ndarray) and obj.ndim == 1

        classes[array.__name__] = NumpyArrayConverter
    return classes


def replace_numpy_converters() -> int:
    """Replace PySpark's numpy converters among py4j's registered input converters by ours
    (in place: the order, which decides which converter wins, stays). Call before the
    `SparkContext` starts; calling again changes nothing.

    Returns
    -------
    int
        How many converters were replaced (0 when already done, or with a PySpark that has
        none of them).
    """
    from py4j import protocol  # type: ignore[import-untyped]

    replacements = _converter_classes()
    replaced = 0
    for index, converter in enumerate(protocol.INPUT_CONVERTER):
        ours = replacements.get(type(converter).__name__)
        if ours is not None and type(converter) is not ours and \
                type(converter).__module__ == "pyspark.sql.types":
            protocol.INPUT_CONVERTER[index] = ours()
            replaced += 1
    return replaced
