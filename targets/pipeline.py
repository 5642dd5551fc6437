"""The whole imaging pipeline: every persistent class of it, importable at once (the target
processor, the command line and Spark's workers import this module)."""

from targets.masters import BiasFrame, DomeFlatFrame
from targets.parameters import (
    BiasFrameParameters,
    CoaddedRegriddedFrameParameters,
    DomeFlatFrameParameters,
    PointingGridParameters,
    ReducedScienceFrameParameters,
    RegriddedFrameParameters,
    SourceListParameters,
)
from targets.raw_frames import (
    IngestRefusedError,
    RawBiasFrame,
    RawDomeFlatFrame,
    RawFrame,
    RawScienceFrame,
    ingest,
)
from targets.science import (
    CoaddedRegriddedFrame,
    PointingGrid,
    ReducedScienceFrame,
    RegriddedFrame,
)
from targets.source_lists import Source, SourceList

STAGES = (BiasFrame, DomeFlatFrame, ReducedScienceFrame, PointingGrid, RegriddedFrame,
          CoaddedRegriddedFrame, SourceList)
"""The process targets, in pipeline order."""

__all__ = [
    "STAGES",
    "BiasFrame",
    "BiasFrameParameters",
    "CoaddedRegriddedFrame",
    "CoaddedRegriddedFrameParameters",
    "DomeFlatFrame",
    "DomeFlatFrameParameters",
    "IngestRefusedError",
    "PointingGrid",
    "PointingGridParameters",
    "RawBiasFrame",
    "RawDomeFlatFrame",
    "RawFrame",
    "RawScienceFrame",
    "ReducedScienceFrame",
    "ReducedScienceFrameParameters",
    "RegriddedFrame",
    "RegriddedFrameParameters",
    "Source",
    "SourceList",
    "SourceListParameters",
    "ingest",
]
