"""The genomics workflow of SubZero (seed 000, sections II-B and VIII-B, Figure 2): a naive
Bayes model of medulloblastoma relapse trained on a feature x patient matrix and applied to
a test matrix, built from ten numpy mapping operators and four UDFs with full, payload and
black-box lineage.

Figure 2 itself is not in the seed's text, so the wiring is a reconstruction from the prose:

- ``E`` `SelectPatients`: the training patients with a known outcome (value-dependent column
  selection); output cell (r, j) copies input cell (r, src[j]).
- built-ins: crop the features X and the outcome row y; count relapsed and not relapsed
  patients (two reductions, an element-wise complement) and the prior log-odds (element-wise).
- ``F`` `NaiveBayes`: model[f, v], the log-likelihood ratio of relapse given feature f = v.
  Its lineage is the training cells of feature f whose value is v, and the outcome row:
  re-running F on only those cells (the rest missing) gives the same value.
- built-ins on the test matrix (patients x features, raw expression levels): transpose,
  per-feature mean (reduction), centring and discretising (element-wise).
- ``G`` `ExtractContributions`: for the informative features (value-dependent row
  selection), the model entry each test patient's value selects.
- ``H`` `PredictRelapse`: relapse probability per test patient from the prior and the strong
  contributions (|c| >= threshold) of its column; its lineage is those cells and the prior.

Arrays live in memory (`ArrayStore`, registered as an array loader for black-box re-runs);
every UDF reads stored arrays (HDUs of committed objects), so each can be re-run at query
time. Training is features x patients: (56, patients), row 0 the outcome (1 relapse,
0 none, -1 unknown), rows 1..55 features with values 0, 1, 2 (-1 missing).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from awlineage import DBObject, persistent
from awlineage.regions import (
    Boxes,
    Operator,
    Shapes,
    capture_regions,
    crop,
    elementwise,
    reduce,
    register_array_loader,
    transpose,
    unregister_array_loader,
)

FEATURES = 55
LEVELS = 3
UDFS = ("E_select", "F_model", "G_extract", "H_predict")


# -- persistent objects -----------------------------------------------------------------
class GenomicsArray(DBObject):
    """An array of the genomics workflow (its data is held by an `ArrayStore`)."""

    label = persistent("What the array is", str, "")


class GenomicsTraining(GenomicsArray):
    """The training feature x patient matrix (an input)."""


class GenomicsTest(GenomicsArray):
    """The test patient x feature matrix of raw expression levels (an input)."""


class GenomicsModel(GenomicsArray):
    """The naive Bayes model: log-likelihood ratio per feature and value."""


class GenomicsPredictions(GenomicsArray):
    """Relapse probability per test patient."""


class ArrayStore:
    """Arrays by (object, HDU), answering black-box re-runs as an array loader while open."""

    def __init__(self) -> None:
        self.arrays: dict[tuple[int, int], np.ndarray] = {}
        register_array_loader(self.load)

    def put(self, obj: DBObject, hdu: int, data: np.ndarray) -> None:
        """Hold `data` as HDU `hdu` of the committed `obj`."""
        self.arrays[(obj.object_id, hdu)] = data

    def get(self, obj: DBObject, hdu: int = 0) -> np.ndarray:
        """The array held for HDU `hdu` of `obj`."""
        return self.arrays[(obj.object_id, hdu)]

    def load(self, obj: DBObject, hdu: int | str) -> np.ndarray | None:
        """Array loader: the held array, or None for objects of other stores."""
        return self.arrays.get((obj.object_id, hdu)) if isinstance(hdu, int) else None

    def close(self) -> None:
        """Stop answering re-runs."""
        unregister_array_loader(self.load)


class NoLineage:
    """Stands in for an operator call when nothing is captured."""

    def wants(self, mode: str) -> bool:
        """Nothing is wanted."""
        return False


NO_LINEAGE = NoLineage()


# -- helpers for the UDFs' lineage -------------------------------------------------------
def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of True along the last axis of a 2-d mask: (row, first, last) per run."""
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.diff(padded, axis=1)
    rows, first = np.nonzero(edges == 1)
    _, last = np.nonzero(edges == -1)
    return rows, first, last - 1


def _column_boxes(rows: int, columns: np.ndarray) -> Boxes:
    """One box per column: every row of it."""
    zeros = np.zeros(len(columns), np.int64)
    return Boxes(np.stack([zeros, columns], 1), np.stack([zeros + rows - 1, columns], 1))


def _nowhere(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of n boxes outside every array: no cells (a payload row with no lineage
    into one input)."""
    return np.full((n, 2), -1, np.int64), np.full((n, 2), -1, np.int64)


# -- the four UDFs -----------------------------------------------------------------------
class SelectPatients(Operator):
    """UDF E: the patients (columns) whose outcome (row 0) is known.

    Lineage: output cell (r, j) copies input cell (r, src[j]). Payload: per run of output
    columns, the column offset src[j] - j (a relative payload: runs without a dropped patient
    share it).
    """

    supported_modes = ("full", "pay")

    def __init__(self) -> None:
        super().__init__("E_select")

    def run(self, train: np.ndarray, *, lineage: Any) -> np.ndarray:
        """The columns of `train` with a known outcome."""
        src = np.flatnonzero(train[0] >= 0)
        rows, n = train.shape[0], len(src)
        if lineage.wants("full"):
            r, j = np.repeat(np.arange(rows), n), np.tile(np.arange(n), rows)
            lineage.lwrite(np.stack([r, j], 1), np.stack([r, src[j]], 1))
        elif lineage.wants("pay"):
            lineage.lwrite_payload(_column_boxes(rows, np.arange(n)), src - np.arange(n))
        return train[:, src]

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        offset = payload[:, 0]
        return Boxes(np.stack([boxes.lo[:, 0], boxes.lo[:, 1] + offset], 1),
                     np.stack([boxes.hi[:, 0], boxes.hi[:, 1] + offset], 1))


class NaiveBayes(Operator):
    """UDF F: model[f, v] = log P(x_f = v | relapse) - log P(x_f = v | no relapse), with
    Laplace smoothing; inputs X (features x patients) and y (1 x patients).

    Lineage of model[f, v]: the cells of X's row f holding v, and all of y (the class sizes).
    Payload: one row per run of v in row f, ``[first patient, last patient]`` (``[-1, -1]``
    when no patient has v).
    """

    supported_modes = ("full", "pay")

    def __init__(self, levels: int = LEVELS) -> None:
        super().__init__("F_model", levels=int(levels))

    def run(self, x: np.ndarray, y: np.ndarray, *, lineage: Any) -> np.ndarray:
        """The model, (features, levels)."""
        levels = self.params["levels"]
        relapsed, spared = y[0] == 1, y[0] == 0
        n_rel, n_spa = relapsed.sum(), spared.sum()
        model = np.zeros((x.shape[0], levels))
        for v in range(levels):
            is_v = x == v
            c_rel, c_spa = (is_v & relapsed).sum(1), (is_v & spared).sum(1)
            model[:, v] = (np.log((c_rel + 1) / (n_rel + levels))
                           - np.log((c_spa + 1) / (n_spa + levels)))
        everything = Boxes([[0, 0]], [[x.shape[0] - 1, levels - 1]])
        outcome = Boxes([[0, 0]], [[0, y.shape[1] - 1]])
        if lineage.wants("full"):
            f, p = np.nonzero((x >= 0) & (x < levels))
            lineage.lwrite(np.stack([f, x[f, p]], 1), np.stack([f, p], 1), None)
            lineage.lwrite(everything, None, outcome)
        elif lineage.wants("pay"):
            cells, payloads = [], []
            for v in range(levels):
                rows, first, last = _runs(x == v)
                # a value nobody has still depends on the outcome row: a row with no run
                lonely = np.setdiff1d(np.arange(x.shape[0]), rows)
                rows = np.concatenate([rows, lonely])
                cells.append(np.stack([rows, np.full(len(rows), v)], 1))
                payloads.append(np.stack([np.concatenate([first, np.full(len(lonely), -1)]),
                                          np.concatenate([last, np.full(len(lonely), -1)])],
                                         1))
            lineage.lwrite_payload(np.concatenate(cells), np.concatenate(payloads))
        return model

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        if i == 1:
            n = len(boxes)
            last = shapes.inputs[1][1] - 1
            return Boxes(np.zeros((n, 2), np.int64), np.tile([0, last], (n, 1)))
        lo, hi = _nowhere(len(boxes))
        some = payload[:, 0] >= 0
        lo[some] = np.stack([boxes.lo[:, 0], payload[:, 0]], 1)[some]
        hi[some] = np.stack([boxes.hi[:, 0], payload[:, 1]], 1)[some]
        return Boxes(lo, hi)


class ExtractContributions(Operator):
    """UDF G: for the informative features (max |model[f]| >= threshold), the model entry each
    test patient's discretised value selects; missing values (-1) contribute 0.

    Inputs: the model (features x levels) and the discretised test matrix (features x
    patients). Lineage of output (k, p): test cell (sel[k], p) and model cell
    (sel[k], value) when the value is known. Payload per cell: ``[sel[k], value]``.
    """

    supported_modes = ("full", "pay")

    def __init__(self, threshold: float = 0.3) -> None:
        super().__init__("G_extract", threshold=float(threshold))

    def selected(self, model: np.ndarray) -> np.ndarray:
        """The informative features."""
        return np.flatnonzero(np.abs(model).max(1) >= self.params["threshold"])

    def run(self, model: np.ndarray, disc: np.ndarray, *, lineage: Any) -> np.ndarray:
        """The contributions, (selected features, patients)."""
        sel = self.selected(model)
        values = disc[sel].astype(np.int64)
        known = values >= 0
        contrib = np.where(known, model[sel[:, None], np.clip(values, 0, None)], 0.0)
        k, p = (a.ravel() for a in np.indices(known.shape))
        if lineage.wants("full"):
            out = np.stack([k, p], 1)
            lineage.lwrite(out, None, np.stack([sel[k], p], 1))
            ok = known[k, p]
            lineage.lwrite(out[ok], np.stack([sel[k], values[k, p]], 1)[ok], None)
        elif lineage.wants("pay"):
            lineage.lwrite_payload(np.stack([k, p], 1), np.stack([sel[k], values[k, p]], 1))
        return contrib

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        feature, value = payload[:, 0], payload[:, 1]
        if i == 1:
            return Boxes(np.stack([feature, boxes.lo[:, 1]], 1),
                         np.stack([feature, boxes.hi[:, 1]], 1))
        lo, hi = _nowhere(len(boxes))
        known = value >= 0
        lo[known] = hi[known] = np.stack([feature, value], 1)[known]
        return Boxes(lo, hi)


class PredictRelapse(Operator):
    """UDF H: relapse probability of each test patient, the logistic of the prior log-odds
    plus the strong contributions (|c| >= threshold) of its column.

    Lineage of output (0, p): the strong cells of column p and the prior. Payload: one row
    per run of strong cells in the column, ``[first, last]`` (``[-1, -1]`` for none).
    """

    supported_modes = ("full", "pay")

    def __init__(self, threshold: float = 0.1) -> None:
        super().__init__("H_predict", threshold=float(threshold))

    def run(self, contrib: np.ndarray, prior: np.ndarray, *, lineage: Any) -> np.ndarray:
        """The probabilities, (1, patients)."""
        strong = np.abs(contrib) >= self.params["threshold"]
        score = prior[0, 0] + np.where(strong, contrib, 0.0).sum(0)
        prob = (1.0 / (1.0 + np.exp(-score)))[None, :]
        patients = contrib.shape[1]
        if lineage.wants("full"):
            k, p = np.nonzero(strong)
            lineage.lwrite(np.stack([np.zeros_like(p), p], 1), np.stack([k, p], 1), None)
            lineage.lwrite(Boxes([[0, 0]], [[0, patients - 1]]), None,
                           Boxes([[0, 0]], [[0, 0]]))
        elif lineage.wants("pay"):
            p, first, last = _runs(strong.T)
            lonely = np.setdiff1d(np.arange(patients), p)
            p = np.concatenate([p, lonely])
            first = np.concatenate([first, np.full(len(lonely), -1)])
            last = np.concatenate([last, np.full(len(lonely), -1)])
            lineage.lwrite_payload(np.stack([np.zeros_like(p), p], 1),
                                   np.stack([first, last], 1))
        return prob

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        n = len(boxes)
        if i == 1:
            return Boxes(np.zeros((n, 2), np.int64), np.zeros((n, 2), np.int64))
        lo, hi = _nowhere(n)
        some = payload[:, 0] >= 0
        lo[some] = np.stack([payload[:, 0], boxes.lo[:, 1]], 1)[some]
        hi[some] = np.stack([payload[:, 1], boxes.hi[:, 1]], 1)[some]
        return Boxes(lo, hi)


# -- the data ----------------------------------------------------------------------------
def synthetic_data(rng: np.random.Generator, patients: int = 100, replicate: int = 1,
                   features: int = FEATURES, test_patients: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(training, test) of the paper's shape, the patients replicated `replicate` times
    (seed 000 VIII-B: the 56 x 100 matrix scaled by replicating its patients).

    Training: (features + 1, patients x replicate), row 0 the outcome (-1 unknown for 8%),
    features 0, 1, 2 (-1 missing for 5%), a third of them informative. Test: (test patients
    x replicate, features) raw expression levels (NaN missing for 3%).
    """
    test_patients = patients if test_patients is None else test_patients
    informative = rng.choice(features, size=max(1, features // 3), replace=False)
    outcome = (rng.random(patients) < 0.35).astype(np.int64)
    values = rng.integers(0, LEVELS, (features, patients))
    shifted = np.clip(values[informative] + np.where(outcome == 1, 1, -1), 0, LEVELS - 1)
    keep = rng.random(shifted.shape) < 0.7
    values[informative] = np.where(keep, shifted, values[informative])
    values[rng.random(values.shape) < 0.05] = -1
    outcome_row = np.where(rng.random(patients) < 0.08, -1, outcome)
    training = np.vstack([outcome_row[None, :], values])
    hidden = (rng.random(test_patients) < 0.35).astype(np.float64)
    levels = rng.normal(5.0, 1.0, (test_patients, features))
    levels[:, informative] += np.where(hidden[:, None] == 1, 0.8, -0.8)
    levels[rng.random(levels.shape) < 0.03] = np.nan
    return np.tile(training, (1, replicate)), np.tile(levels, (replicate, 1))


def discretise(centred: np.ndarray) -> np.ndarray:
    """Expression levels about the feature mean to 0 (low), 1, 2 (high); NaN to -1."""
    levels = (centred > -0.5).astype(np.int64) + (centred > 0.5)
    return np.where(np.isnan(centred), -1, levels)


# -- the workflow ------------------------------------------------------------------------
@dataclass
class GenomicsRun:
    """One execution: its objects, the arrays they hold, and per-UDF seconds."""

    store: ArrayStore
    objects: dict[str, DBObject] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def array(self, name: str, hdu: int = 0) -> np.ndarray:
        """The array of object `name`."""
        return self.store.get(self.objects[name], hdu)


def run_workflow(training: np.ndarray, test: np.ndarray, strategies: dict[str, str] | None,
                 store: ArrayStore | None = None) -> GenomicsRun:
    """Run the workflow, committing every object.

    Parameters
    ----------
    strategies
        Lineage strategy per UDF name (`UDFS`; missing names: ``blackbox``; a set joined
        by ``+``, such as ``pay+full-forward``), or None to capture nothing. The built-ins
        always record mapping lineage.
    """
    run = GenomicsRun(store or ArrayStore())
    capture = strategies is not None
    train_obj = GenomicsTraining(label="training")
    test_obj = GenomicsTest(label="test")
    for obj, data in ((train_obj, training), (test_obj, test)):
        obj.commit()
        run.store.put(obj, 0, data)
    run.objects.update(training=train_obj, test=test_obj)

    def udf(name: str, op: Operator, output: DBObject,
            inputs: Sequence[tuple[DBObject, int]]) -> np.ndarray:
        arrays = [run.store.get(o, h) for o, h in inputs]
        start = time.perf_counter()
        if capture:
            assert strategies is not None
            # a strategy, or a set joined by "+" (PayBoth: pay+full-forward)
            kept = strategies.get(name, "blackbox").split("+")
            with capture_regions(output) as cap:
                refs = [cap.array(o, h, data=a) for (o, h), a in zip(inputs, arrays,
                                                                     strict=True)]
                result = cap.run(op, refs, arrays, strategies=kept)
        else:
            result = op.run(*arrays, lineage=NO_LINEAGE)
        output.commit()
        run.seconds[name] = time.perf_counter() - start
        run.store.put(output, 0, result)
        run.objects[name] = output
        return result

    cleaned = GenomicsArray(label="cleaned")
    clean = udf("E_select", SelectPatients(), cleaned, [(train_obj, 0)])

    # built-ins 1-6: features, outcome, class sizes, prior log-odds
    split = GenomicsArray(label="split")
    x, y = clean[1:], clean[0:1]
    n_rel = y.sum(axis=1, keepdims=True)
    spared = 1 - y
    n_spa = spared.sum(axis=1, keepdims=True)
    prior = np.log((n_rel + 1) / (n_spa + 1))
    if capture:
        with capture_regions(split) as cap:
            src = cap.array(cleaned, data=clean)
            cap.apply(crop([slice(1, None)]), [src], hdu=0)
            ys = cap.apply(crop([slice(0, 1)]), [src], hdu=1)
            rel = cap.apply(reduce(1, keepdims=True), [ys], name="relapsed")
            spa = cap.apply(elementwise(), [ys], name="spared")
            nspa = cap.apply(reduce(1, keepdims=True), [spa], name="n_spared")
            cap.apply(elementwise(), [rel, nspa], hdu=2)
    split.commit()
    for hdu, data in enumerate((x, y, prior)):
        run.store.put(split, hdu, data)
    run.objects["split"] = split

    udf("F_model", NaiveBayes(), GenomicsModel(label="model"), [(split, 0), (split, 1)])

    # built-ins 7-10: the test matrix transposed, centred per feature, discretised
    features = GenomicsArray(label="test features")
    levels = test.T
    mean = np.nanmean(levels, axis=1, keepdims=True)
    disc = discretise(levels - mean)
    if capture:
        with capture_regions(features) as cap:
            raw = cap.array(test_obj, data=test)
            lev = cap.apply(transpose(), [raw], name="levels")
            mu = cap.apply(reduce(1, keepdims=True), [lev], name="mean")
            cen = cap.apply(elementwise(), [lev, mu], name="centred")
            cap.apply(elementwise(), [cen], hdu=0)
    features.commit()
    run.store.put(features, 0, disc)
    run.objects["test features"] = features

    udf("G_extract", ExtractContributions(), GenomicsArray(label="contributions"),
        [(run.objects["F_model"], 0), (features, 0)])
    udf("H_predict", PredictRelapse(), GenomicsPredictions(label="predictions"),
        [(run.objects["G_extract"], 0), (split, 2)])
    return run
