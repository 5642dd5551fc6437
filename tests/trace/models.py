"""Process targets used by the tracing and lineage tests (names unique across the suite)."""

from __future__ import annotations

from awlineage import DataObject, DBObject, Process, persistent, select, traced


class Exposure(DBObject):
    chip = persistent("CCD name", str, "", index=True)
    counts = persistent("Pixel counts [ADU]", float, [])


class LevelParameters(DBObject):
    clip_sigma = persistent("Sigma for clipping", float, 3.0)
    scale = persistent("Scale factor", float, 1.0)


@traced
def clipped_mean(values: list[float], sigma: float) -> float:
    """Mean of the values within `sigma` standard deviations of the mean."""
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    kept = [v for v in values if abs(v - mean) <= sigma * spread] or values
    return sum(kept) / len(kept)


class MasterLevel(Process):
    exposures = persistent("Exposures combined", Exposure, [])
    process_params = persistent("Processing parameters", LevelParameters, None)
    level = persistent("Clipped mean level [ADU]", float, None)

    def make(self) -> None:
        self.level = self.combine() * self.process_params.scale

    def combine(self) -> float:
        values = [v for exposure in self.exposures for v in exposure.counts]
        return clipped_mean(values, self.process_params.clip_sigma)


class VersionedLevel(MasterLevel):
    code_version = "1.2"


class CalibratedExposure(Process):
    exposure = persistent("Exposure calibrated", Exposure, None)
    master = persistent("Master level subtracted", MasterLevel, None)
    value = persistent("Calibrated mean [ADU]", float, None)

    def make(self) -> None:
        if self.master is None:
            master = MasterLevel(exposures=[self.exposure])
            master.make()
            self.master = master
        counts = self.exposure.counts
        self.value = sum(counts) / len(counts) - self.master.level


class Detection(DBObject):
    catalogue = persistent("Catalogue it belongs to", DBObject, None)
    flux = persistent("Flux [ADU]", float, 0.0)


class Catalogue(Process):
    chip = persistent("CCD searched", str, "")
    ndetections = persistent("Number of detections", int, 0)

    def make(self) -> None:
        exposures = list(select(Exposure.chip == self.chip))
        for exposure in exposures:
            for value in exposure.counts:
                if value > 100:
                    Detection(catalogue=self, flux=value)
                    self.ndetections += 1


class BrokenTarget(Process):
    exposure = persistent("Exposure read before failing", Exposure, None)

    def make(self) -> None:
        _ = self.exposure.counts
        Exposure(chip="never stored")
        raise ValueError(f"cannot make {self.object_id}: deliberately broken")


class HalfWrittenTarget(DataObject, Process):
    """Commits an object of its own, stores its file (and a scratch product's), then fails."""

    exposure = persistent("Exposure read before failing", Exposure, None)
    side = persistent("Committed by the make itself", Exposure, None)

    def make(self) -> None:
        self.side = Exposure(chip="committed inside make", counts=list(self.exposure.counts))
        self.side.commit()
        self.store(b"the target's own bytes " + str(self.object_id).encode())
        DataObject().store(b"a scratch product of " + str(self.object_id).encode())
        DataObject().store(b"bytes stored and committed before")  # same bytes, own name
        raise ValueError("failed after writing")


class StoringChild(DataObject, Process):
    """Stores its own file: made inside `FailingParent`'s make."""

    n = persistent("A number", int, 0)

    def make(self) -> None:
        self.store(b"the child's bytes " + str(self.object_id).encode())


class FailingParent(Process):
    """Makes a child that stores a file, stores a file under a shared name, then fails."""

    shared_path = persistent("A file stored under its own base name", str, "")

    def make(self) -> None:
        StoringChild(n=1).make()
        DataObject(pathname=self.shared_path).store()  # a name another writer may share
        raise ValueError("the parent failed after its child")


class ExtendedLevel(MasterLevel):
    offset = persistent("Added after the combination", float, 0.0)

    def make(self) -> None:
        super().make()
        self.level += self.offset


class PixelSource(DBObject):
    label = persistent("What it is", str, "")


class PixelProduct(Process):
    source = persistent("Image it is computed from", PixelSource, None)

    def make(self) -> None:
        from awlineage.regions import capture_regions, elementwise

        with capture_regions(self) as capture:
            capture.apply(elementwise(), [capture.array(self.source, shape=(3, 3))])
