"""Automatic layout search: enumerate every valid (tp, pp, dp, cp, micro-batch, interleave)
for a cluster, evaluate them in one vectorised pass, rank by throughput."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from app.modelling.throughput.config import (
    ClusterConfig,
    FloatArray,
    IntArray,
    Layouts,
    TrainingConfig,
)
from app.modelling.throughput.model import ModelShape
from app.modelling.throughput.step import StepArrays, _valid, evaluate_layouts

MICROBATCHES = (1, 2, 4, 8, 16)
INTERLEAVES = (1, 2, 3, 4, 8)
CONTEXT_PARALLEL = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class SearchResult:
    """Layouts sorted best first (fitting ones before non-fitting) with their results."""

    layouts: Layouts
    results: StepArrays
    evaluated: int  # candidate layouts evaluated (valid ones)

    @property
    def any_fit(self) -> bool:
        return bool(self.results.fits.any())


def enumerate_layouts(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig,
                      max_cp: int = 16) -> Layouts:
    """Every layout with TP inside one NVLink domain (a power of two dividing the heads),
    PP up to the layer count (shorter first/last stages allowed), CP a power of two, DP
    filling the GPUs, and the batch, head and interleaving rules of Megatron-LM."""
    n = cl.num_gpus
    tps = [t for t in (1, 2, 4, 8, 16, 32, 64, 72)
           if t <= cl.gpus_per_node and m.heads % t == 0 and n % t == 0]
    pps = [p for p in range(1, m.layers + 1) if n % p == 0]  # uneven stages: _valid
    cps = [c for c in CONTEXT_PARALLEL if c <= max_cp and n % c == 0]
    grid = np.meshgrid(np.array(tps), np.array(pps), np.array(cps), np.array(MICROBATCHES),
                       np.array(INTERLEAVES), indexing="ij")
    tp, pp, cp, b, v = (g.ravel().astype(np.int64) for g in grid)
    model_par = tp * pp * cp
    dp = np.where(n % model_par == 0, n // np.maximum(model_par, 1), 0).astype(np.int64)
    cand = Layouts(tp, pp, dp, cp, b, v)
    keep = _valid(m, tr, cl, cand)
    return _take(cand, np.flatnonzero(keep))


def _take(lay: Layouts, idx: IntArray) -> Layouts:
    return Layouts(lay.tp[idx], lay.pp[idx], lay.dp[idx], lay.cp[idx], lay.microbatch[idx],
                   lay.interleave[idx])


def _take_results(r: StepArrays, idx: IntArray) -> StepArrays:
    mem = replace(r.memory, **{k: getattr(r.memory, k)[idx] for k in (
        "weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "total_bytes",
        "fits")})
    arrays = {k: getattr(r, k)[idx] for k in r.__dataclass_fields__ if k != "memory"}
    return StepArrays(**arrays, memory=mem)


def search_layouts(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig,
                   max_cp: int = 16) -> SearchResult:
    """Evaluate all candidate layouts at once and sort: fitting first, then by tokens/s."""
    lay = enumerate_layouts(m, tr, cl, max_cp)
    res = evaluate_layouts(m, tr, cl, lay)
    order = np.lexsort((res.step_time_s, ~res.fits)).astype(np.int64)
    return SearchResult(_take(lay, order), _take_results(res, order), len(lay))


@dataclass(frozen=True)
class ScalingCurve:
    """Best throughput per cluster size (0 where nothing fits)."""

    num_gpus: IntArray
    tokens_per_s: FloatArray
    mfu: FloatArray


def scaling_curve(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig,
                  node_counts: Sequence[int]) -> ScalingCurve:
    """Throughput vs GPU count on one fabric: the best layout at each node count."""
    gpus, tps, mfus = [], [], []
    for nodes in node_counts:
        res = search_layouts(m, tr, replace(cl, nodes=int(nodes))).results
        ok = res.fits
        gpus.append(int(nodes) * cl.gpus_per_node)
        tps.append(float(res.tokens_per_s[0]) if ok.any() else 0.0)
        mfus.append(float(res.mfu[0]) if ok.any() else 0.0)
    return ScalingCurve(np.array(gpus, dtype=np.int64), np.array(tps), np.array(mfus))
