"""The imaging pipeline as process targets (raw frames, calibrations, reduced, regridded and
coadded frames, source lists) and the synthetic-sky generator of the demo.

The science lives in framework-free modules that the process targets call: `sky` (the synthetic
night and its truth), `headers` (what a raw FITS header says), `calibration`, `reduction`,
`regrid`, `coadd` and `extraction` (one stage each, with its parameters dataclass), and `direct`
(the whole chain without the framework, for tests and benchmarks)."""
