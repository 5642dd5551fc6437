"""The names of the executors, apart from the executors themselves, so that ``awl --help``
lists them without importing the processor."""

EXECUTOR_NAMES = ("auto", "spark", "serial")
"""The executors a processor or ``awl make --executor`` can be given by name."""
