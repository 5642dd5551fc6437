"""The Spark driver converts numpy arguments for the JVM as PySpark does, without importing
pandas and pyarrow to decide whether an argument is a numpy object."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from py4j import protocol
from pyspark.sql import types

from awlineage.processing._py4j_converters import replace_numpy_converters


def test_the_numpy_converters_are_replaced_in_place_once() -> None:
    replace_numpy_converters()
    names = [(type(c).__module__, type(c).__name__) for c in protocol.INPUT_CONVERTER]
    ours = "awlineage.processing._py4j_converters"
    assert (ours, "NumpyArrayConverter") in names and (ours, "NumpyScalarConverter") in names
    assert ("pyspark.sql.types", "NumpyArrayConverter") not in names
    assert ("pyspark.sql.types", "NumpyScalarConverter") not in names
    assert names[0] == (ours, "NumpyArrayConverter")  # still ahead of py4j's ListConverter
    assert replace_numpy_converters() == 0


@pytest.mark.filterwarnings("ignore::FutureWarning")  # PySpark's own converter imports pandas
def test_they_answer_and_convert_as_pyspark_does() -> None:
    replace_numpy_converters()
    array = next(c for c in protocol.INPUT_CONVERTER
                 if type(c).__name__ == "NumpyArrayConverter")
    scalar = next(c for c in protocol.INPUT_CONVERTER
                  if type(c).__name__ == "NumpyScalarConverter")
    for value in (np.arange(3), np.zeros((2, 2)), [1, 2], 1.5, np.float64(2.5), np.int32(4),
                  "text"):
        assert array.can_convert(value) == types.NumpyArrayConverter().can_convert(value)
        assert scalar.can_convert(value) == types.NumpyScalarConverter().can_convert(value)
    assert isinstance(array, types.NumpyArrayConverter)  # PySpark's convert
    assert scalar.convert(np.float64(2.5), None) == 2.5


DRIVER = textwrap.dedent("""
    import sys
    import numpy as np
    from awlineage.processing import SparkExecutor
    executor = SparkExecutor("local[1]")
    jvm = executor.context._jvm
    print(jvm.java.util.Arrays.toString(np.array([1.5, 2.5])), jvm.java.lang.Math.abs(np.int64(-4)))
    print(sorted({"pandas", "pyarrow"} & set(sys.modules)))
    executor.close(stop=True)
""")


def test_a_spark_driver_imports_neither_pandas_nor_pyarrow() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [os.getcwd(), os.environ.get("PYTHONPATH", "")])))
    done = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["[1.5, 2.5] 4", "[]"]
