"""The imaging pipeline as process targets (raw frames, calibrations, reduced, regridded and
coadded frames, source lists) and the synthetic-sky generator of the demo."""
