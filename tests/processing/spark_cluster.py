"""A Spark standalone cluster on loopback for tests and benchmarks: the package's own
(`awlineage.processing._standalone`, what ``awl spark start`` runs), one master and its
workers, stopped afterwards."""

from __future__ import annotations

from awlineage.processing._standalone import StandaloneCluster, free_port

__all__ = ["SparkCluster", "free_port"]

SparkCluster = StandaloneCluster
"""``SparkCluster(directory, workers=2, cores=1)``: started at once; ``master_url``,
``stop()``."""
