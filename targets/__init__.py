"""The imaging pipeline as process targets (raw frames, calibrations, reduced, regridded and
coadded frames, source lists) and the synthetic-sky generator of the demo.

The science lives in framework-free modules that the process targets call: `sky` (the synthetic
night and its truth), `headers` (what a raw FITS header says), `calibration`, `reduction`,
`regrid`, `coadd` and `extraction` (one stage each, with its parameters dataclass), and `direct`
(the whole chain without the framework, for tests and benchmarks)."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# OpenMP threads that wait for work sleep rather than spin (a value set already stays): set
# before astroscrappy's own libgomp is loaded, which reads it once. On a 2-core machine where
# another process kept one core busy, the small night's reduction took 2.65-3.72 s with
# libgomp's default (a thread spinning at each barrier while its partner waited for the busy
# core) against 0.80-1.59 s passive, whole `targets.direct` runs 5.4-6.1 s against 2.8-4.0 s.
