"""The four workloads of DSLog's Table VII (seed 004, VII-C) beyond the numpy operations,
generated here: two relational operations (Group By, Inner Join) over IMDB-like tables, and
two explainable-AI lineages (LIME, D-RISE) over one video frame and a stand-in detector.

Each generator returns the lineage as cell tuples: the output shape, the input shapes, and
per input a pair of (N, d) arrays, output cells and the input cells they depend on, row by
row. Tables are arrays of (row, column) cells; the frame is (height, width, channel).

Relational lineage follows the paper's custom capture functions: an output cell of a group
depends on that column's cells in every input row of the group; a joined output cell on the
one cell of the input row it was copied from (its key on the matched row of both tables).
The paper groups on ``isAdult``, which is unsorted, and joins on ``tconst``, sorted in both.

The explainable-AI lineage follows the paper's VII-A: LIME and D-RISE give a weighted
contribution of every input cell to every output cell of ``y = model(x)``; the cells whose
contribution passes a significance threshold are the lineage. The model is a stand-in for
YOLOv4 (no model is downloaded): a fixed, non-linear numpy detector that returns one car
detection ``[objectness, centre x, centre y, width, height]`` from a synthetic street frame
with a car in it. LIME switches superpixels (Voronoi cells of jittered seeds) on and off at
random and fits a ridge regression per output; D-RISE multiplies the frame by random
bilinear-upsampled grid masks and weights each mask by how well the masked detection keeps
each output.
"""

from __future__ import annotations

import numpy as np

Pairs = list[tuple[np.ndarray, np.ndarray]]
Lineage = tuple[tuple[int, ...], list[tuple[int, ...]], Pairs]


# -- relational ------------------------------------------------------------------------------
def _column(rows: np.ndarray, column: int) -> np.ndarray:
    return np.stack([rows, np.full(len(rows), column)], axis=1)


def group_by(rows: int, rng: np.random.Generator, adult: float = 0.03) -> Lineage:
    """``SELECT isAdult, avg(runtimeMinutes) FROM basics GROUP BY isAdult`` over a table of
    `rows` rows and five columns (tconst, titleType, isAdult, startYear, runtimeMinutes),
    isAdult 1 on a random `adult` share of the rows (unsorted, as in IMDB). Output (2, 2):
    group g's key cell depends on the isAdult cells of its rows, its average on their runtime
    cells; groups in order of their key."""
    key = (rng.random(rows) < adult).astype(np.int64)
    order = np.argsort(key, kind="stable")                  # rows of group 0, then group 1
    groups = key[order]
    out, inp = [], []
    for out_column, in_column in ((0, 2), (1, 4)):
        out.append(_column(groups, out_column))
        inp.append(_column(order, in_column))
    return (2, 2), [(rows, 5)], [(np.concatenate(out), np.concatenate(inp))]


def inner_join(episodes: int, rng: np.random.Generator, share: float = 0.7) -> Lineage:
    """``episode JOIN basics USING (tconst)``: basics has ``episodes / share`` rows and five
    columns (tconst, titleType, isAdult, startYear, runtimeMinutes), episode `episodes` rows
    and four (tconst, parentTconst, seasonNumber, episodeNumber), both sorted on tconst, and
    every episode is a title (a random subset of basics' rows). Output: one row per episode,
    its four columns then basics' four non-key columns. Output cell (r, c) depends on
    episode (r, c) for c < 4 and on basics (m, c - 3) for c >= 4, where m is the basics row
    matched; the key (r, 0) also on basics (m, 0)."""
    titles = round(episodes / share)
    matched = np.sort(rng.choice(titles, size=episodes, replace=False))
    rows = np.arange(episodes)
    ep_out = np.concatenate([_column(rows, c) for c in range(4)])
    ep_in = ep_out.copy()
    basic_out = np.concatenate([_column(rows, c) for c in (0, 4, 5, 6, 7)])
    basic_in = np.concatenate([_column(matched, c) for c in (0, 1, 2, 3, 4)])
    return ((episodes, 8), [(episodes, 4), (titles, 5)],
            [(ep_out, ep_in), (basic_out, basic_in)])


# -- explainable AI ---------------------------------------------------------------------------
POOL = 8
"""The stand-in detector's first step pools the grey frame in blocks of POOL x POOL."""


def street_frame(side: int, rng: np.random.Generator) -> np.ndarray:
    """A (side, side, 3) frame in [0, 1]: a sky-to-road gradient with noise, a lane marking,
    and one car (a bright body, dark windows and wheels) right of the centre."""
    yy, xx = np.mgrid[0:side, 0:side] / side
    frame = np.repeat((0.55 - 0.3 * yy)[..., None], 3, axis=2)
    frame += rng.normal(0, 0.03, frame.shape)
    frame[(np.abs(xx - 0.3 + 0.2 * yy) < 0.01) & (yy > 0.5)] = 0.9        # lane marking
    body = (np.abs(xx - 0.62) < 0.13) & (np.abs(yy - 0.58) < 0.06)
    roof = (np.abs(xx - 0.60) < 0.07) & (np.abs(yy - 0.49) < 0.035)
    frame[body | roof] = (0.85, 0.1, 0.1)
    frame[roof & (np.abs(xx - 0.60) < 0.055) & (np.abs(yy - 0.49) < 0.025)] = 0.15
    for wheel in (0.53, 0.71):
        frame[(xx - wheel) ** 2 + (yy - 0.645) ** 2 < 0.025 ** 2] = 0.05
    return np.clip(frame, 0, 1)


def _grey(frame: np.ndarray) -> np.ndarray:
    return frame @ np.array([0.299, 0.587, 0.114])


def detector(grey: np.ndarray) -> np.ndarray:
    """The stand-in model on (M, side, side) grey frames: (M, 5) detections. Pools 8 x 8
    blocks, takes the contrast to the road's level through a sigmoid, and reads one anchor
    window (the right half of the lower middle) as objectness and moments (centre, size)."""
    m, side, _ = grey.shape
    blocks = side // POOL
    pooled = grey[:, :blocks * POOL, :blocks * POOL].reshape(m, blocks, POOL, blocks, POOL)
    pooled = pooled.mean(axis=(2, 4))
    ys, xs = np.mgrid[0:blocks, 0:blocks] / blocks
    anchor = np.exp(-((xs - 0.62) ** 2 / 0.03 + (ys - 0.58) ** 2 / 0.015))
    response = 1 / (1 + np.exp(-25 * (np.abs(pooled - 0.38) - 0.12))) * anchor
    mass = response.sum(axis=(1, 2)) + 1e-9
    cx = (response * xs).sum(axis=(1, 2)) / mass
    cy = (response * ys).sum(axis=(1, 2)) / mass
    width = np.sqrt((response * (xs - cx[:, None, None]) ** 2).sum(axis=(1, 2)) / mass)
    height = np.sqrt((response * (ys - cy[:, None, None]) ** 2).sum(axis=(1, 2)) / mass)
    objectness = 1 / (1 + np.exp(-(mass / anchor.sum() - 0.1) * 20))
    return np.stack([objectness, cx, cy, 4 * width, 4 * height], axis=1)


def superpixels(side: int, rng: np.random.Generator) -> np.ndarray:
    """(side, side) labels: the Voronoi cells of a jittered grid of seeds about 30 pixels
    apart (LIME's segmentation, spatial only; 14 x 14 on a 416-pixel frame)."""
    per_side = max(4, round(side / 30))
    step = side / per_side
    grid = (np.mgrid[0:per_side, 0:per_side].reshape(2, -1).T + 0.5) * step
    seeds = grid + rng.uniform(-0.35, 0.35, grid.shape) * step
    yy, xx = np.mgrid[0:side, 0:side]
    labels = np.empty((side, side), np.int64)
    for row in range(side):                                  # a row at a time: small memory
        d = (yy[row, :, None] - seeds[:, 0]) ** 2 + (xx[row, :, None] - seeds[:, 1]) ** 2
        labels[row] = d.argmin(axis=1)
    return labels


def _pixel_lineage(significant: np.ndarray, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Cell tuples from a (outputs, side, side) significance mask: each output cell depends
    on every channel of each of its significant pixels."""
    outs, ins = [], []
    for j, mask in enumerate(significant):
        pix = np.argwhere(mask)
        cells = np.repeat(pix, channels, axis=0)
        chan = np.tile(np.arange(channels), len(pix))[:, None]
        ins.append(np.hstack([cells, chan]))
        outs.append(np.full((len(cells), 1), j))
    return np.concatenate(outs), np.concatenate(ins)


def lime(side: int, samples: int, rng: np.random.Generator,
         threshold: float = 4.0) -> tuple[Lineage, dict[str, float]]:
    """LIME on the stand-in detector: `samples` random on/off vectors over the superpixels
    (off = the frame's mean colour), a ridge regression per output of the detection on the
    vectors, and per output the superpixels whose weight is at least `threshold` standard
    errors from zero (a t-statistic, as D-RISE's z-score). Returns the lineage and a few
    facts (superpixels, significant per output)."""
    frame = street_frame(side, rng)
    labels = superpixels(side, rng)
    count = int(labels.max()) + 1
    if samples <= 2 * (count + 1):
        raise ValueError(f"lime: samples={samples} must exceed twice the {count} superpixels "
                         f"of a {side}-pixel frame plus one")
    grey, fill = _grey(frame), _grey(frame.mean(axis=(0, 1)))
    target = detector(grey[None])[0]
    on = rng.random((samples, count)) < 0.5
    on[0] = True
    ys = np.empty((samples, len(target)))
    for start in range(0, samples, 64):
        keep = on[start:start + 64][:, labels]               # (batch, side, side)
        ys[start:start + 64] = detector(np.where(keep, grey, fill))
    x = np.hstack([on.astype(float), np.ones((samples, 1))])
    inverse = np.linalg.inv(x.T @ x + np.eye(count + 1))
    weights = inverse @ x.T @ (ys - target)                  # (superpixels + 1, outputs)
    residual = ((ys - target - x @ weights) ** 2).sum(axis=0) / (samples - count - 1)
    error = np.sqrt(np.outer(np.diag(inverse), residual))
    chosen = (np.abs(weights) >= threshold * np.maximum(error, 1e-12))[:-1].T
    significant = chosen[:, labels]                          # (outputs, side, side)
    lineage: Lineage = ((len(target),), [(side, side, 3)], [_pixel_lineage(significant, 3)])
    return lineage, {"superpixels": count, "chosen": float(chosen.sum(axis=1).mean())}


def drise(side: int, samples: int, rng: np.random.Generator, grid: int = 16,
          threshold: float = 4.0) -> tuple[Lineage, dict[str, float]]:
    """D-RISE on the stand-in detector: `samples` random grid x grid binary masks (half on),
    upsampled bilinearly with a random shift of up to one grid cell, fading the frame to its
    mean colour where a mask is off (as LIME's off superpixels); each masked frame's
    detection weighs its mask per output by how close that output stays to the unmasked
    one. A pixel's saliency for an output is the mean weight of the masks that keep it; it is
    significant where that mean is `threshold` standard errors above the mean weight of all
    masks (a z-score: an output no mask changes has no significant pixel)."""
    frame = street_frame(side, rng)
    grey, fill = _grey(frame), _grey(frame.mean(axis=(0, 1)))
    target = detector(grey[None])[0]
    cell = side / grid
    saliency = np.zeros((len(target), side, side))
    total = np.zeros((side, side))
    scale = np.maximum(np.abs(target), 0.05)
    moments = np.zeros((2, len(target)))                     # sums of keep and keep**2
    for start in range(0, samples, 64):
        batch = min(64, samples - start)
        coarse = rng.random((batch, grid + 2, grid + 2)) < 0.5
        masks = _upsample(coarse, side, cell, rng)
        found = detector(fill + (grey - fill) * masks)
        keep = np.exp(-np.abs(found - target) / (0.1 * scale))          # (batch, outputs)
        saliency += (keep.T @ masks.reshape(batch, -1)).reshape(saliency.shape)
        moments += keep.sum(axis=0), (keep ** 2).sum(axis=0)
        total += masks.sum(axis=0)
    saliency /= np.maximum(total, 1e-9)
    spread = np.sqrt(moments[1] / samples - (moments[0] / samples) ** 2)[:, None, None]
    score = (saliency - (moments[0] / samples)[:, None, None]) * np.sqrt(total) / spread
    significant = score >= threshold
    lineage: Lineage = ((len(target),), [(side, side, 3)], [_pixel_lineage(significant, 3)])
    return lineage, {"pixels": float(significant.sum(axis=(1, 2)).mean())}


def _upsample(coarse: np.ndarray, side: int, cell: float, rng: np.random.Generator
              ) -> np.ndarray:
    """(batch, grid + 2, grid + 2) masks bilinearly upsampled to cover side + cell pixels
    and cut at a random shift each (RISE's masks): (batch, side, side). Interpolates one
    axis at a time by gathers (no BLAS: small batched products crawl on a busy machine)."""
    batch = len(coarse)
    at = (np.arange(side)[None, :] + rng.uniform(0, cell, (2, batch, 1))) / cell
    low = np.minimum(at.astype(np.int64), coarse.shape[1] - 2)   # (2, batch, side)
    frac = (at - low).astype(np.float32)
    rows = np.arange(batch)[:, None]
    c = coarse.astype(np.float32)
    by_y = (1 - frac[0])[..., None] * c[rows, low[0]] + frac[0][..., None] * c[rows, low[0] + 1]
    rows = rows[..., None]
    left = by_y[rows, np.arange(side)[None, :, None], low[1][:, None, :]]
    right = by_y[rows, np.arange(side)[None, :, None], low[1][:, None, :] + 1]
    return (1 - frac[1])[:, None, :] * left + frac[1][:, None, :] * right
