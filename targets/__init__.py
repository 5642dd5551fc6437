"""The imaging pipeline as process targets (raw frames, calibrations, reduced, regridded and
coadded frames, source lists) and the synthetic-sky generator of the demo.

The science lives in framework-free modules that the process targets call: `sky` (the synthetic
night and its truth), `headers` (what a raw FITS header says), `calibration`, `reduction`,
`regrid`, `coadd` and `extraction` (one stage each, with its parameters dataclass), and `direct`
(the whole chain without the framework, for tests and benchmarks)."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# OpenMP threads that wait for work sleep rather than spin (a value set already stays): set
# before astroscrappy's own libgomp is loaded, which reads it once. The small night's
# reduction (`targets.direct`, 2 cores, 3 runs each): with another process keeping one core
# busy 1.15-1.20 s passive against 1.93-2.21 s with libgomp's default (a thread spinning at
# each barrier while its partner waits for the busy core); on a quiet machine 0.78-0.84 s
# against 0.71-0.73 s, the price of waking the threads.
