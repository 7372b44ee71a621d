"""Throughput side of the planner: the best parallel layout of each candidate cluster.

Each cluster (GPU type x node count x scale-out fabric x oversubscription) gets the
throughput model's own layout search (app.modelling.throughput.search_layouts: every valid
TP/PP/DP/CP/micro-batch/interleave, ranked by step time), so the planner never assumes a
constant speed per GPU. Clusters that differ only in fabric or oversubscription share one
enumeration of layouts (it depends on the GPU count alone) and are re-evaluated with
evaluate_layouts, which is what the search itself does per cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from app.modelling.throughput import (
    ClusterConfig,
    FabricSpec,
    FailureConfig,
    GpuSpec,
    Layouts,
    ModelShape,
    TrainingConfig,
    evaluate_layouts,
)
from app.modelling.throughput.failures import useful_fractions
from app.modelling.throughput.layouts import enumerate_layouts

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

STEP_FIELDS = ("compute_s", "tp_comm_exposed_s", "cp_comm_exposed_s", "pipeline_bubble_s",
               "pp_comm_s", "dp_comm_exposed_s", "optimizer_s", "data_stall_s")
LAYOUT_FIELDS = ("tp", "pp", "dp", "cp", "microbatch", "interleave")


@dataclass(frozen=True)
class ClusterSpec:
    """One candidate cluster. fabric_key names the network for pairing with payments (a cloud
    offer's key such as "aws:p5.48xlarge", or the fabric name for a buyer-chosen network).
    network_capex_usd: scale-out switches, NICs and cabling for an owned build (NaN when no
    price is known: owned options on this cluster are then left out).
    owned_fixed_usd_per_hour: running costs of an owned cluster that do not scale per GPU
    (operations staff); spread over its GPUs when an owned payment is costed."""

    gpu_key: str
    gpu: GpuSpec
    nodes: int
    gpus_per_node: int
    scale_up: FabricSpec
    scale_out: FabricSpec
    nics_per_node: int
    nic_gbits_per_s: float
    oversubscription: float = 1.0
    fabric_key: str = ""
    cloud_only: bool = False
    network_capex_usd: float = float("nan")
    owned_fixed_usd_per_hour: float = 0.0  # owned only: staff etc. that scale with the cluster

    @property
    def num_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def label(self) -> str:
        over = "" if self.oversubscription == 1 else f" {self.oversubscription:g}:1"
        return (f"{self.nodes}x{self.gpus_per_node} {self.gpu_key}, "
                f"{self.scale_out.name}{over}")

    def config(self) -> ClusterConfig:
        return ClusterConfig(gpu=self.gpu, gpus_per_node=self.gpus_per_node, nodes=self.nodes,
                             scale_up=self.scale_up, scale_out=self.scale_out,
                             nics_per_node=self.nics_per_node,
                             nic_gbits_per_s=self.nic_gbits_per_s,
                             oversubscription=self.oversubscription)


@dataclass(frozen=True)
class ClusterArrays:
    """Best layout per cluster (arrays over clusters). tokens_per_s is 0 where no layout fits
    in memory (reason says why); steps holds the step-time breakdown in seconds."""

    specs: tuple[ClusterSpec, ...]
    fits: BoolArray
    tokens_per_s: FloatArray
    step_time_s: FloatArray
    mfu: FloatArray
    layout: dict[str, IntArray]
    steps: dict[str, FloatArray]
    hardware_useful_fraction: FloatArray  # goodput after hardware failures alone
    reasons: tuple[str, ...]
    layouts_evaluated: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def gpus(self) -> FloatArray:
        return np.array([s.num_gpus for s in self.specs], dtype=np.float64)


def _size_key(s: ClusterSpec) -> tuple[str, int, int]:
    return (s.gpu_key, s.nodes, s.gpus_per_node)


def evaluate_clusters(m: ModelShape, tr: TrainingConfig, specs: list[ClusterSpec],
                      failures: FailureConfig | None = None,
                      top_k_reuse: int | None = None) -> ClusterArrays:
    """Best layout per cluster. Layouts are enumerated once per (GPU, node count) and every
    fabric/oversubscription variant evaluates all of them (exact), or only the top_k_reuse
    best of the first variant when given (faster; the best layout rarely changes between
    fabrics, and the report says when this shortcut was used)."""
    fail = failures or FailureConfig()
    n = len(specs)
    fits = np.zeros(n, dtype=np.bool_)
    tps, step, mfu = (np.zeros(n) for _ in range(3))
    lay = {k: np.zeros(n, dtype=np.int64) for k in LAYOUT_FIELDS}
    steps = {k: np.zeros(n) for k in STEP_FIELDS}
    reasons = [""] * n
    evaluated = 0
    enumerated: dict[tuple[str, int, int], Layouts] = {}
    for i, spec in enumerate(specs):
        cl = spec.config()
        key = _size_key(spec)
        cand = enumerated.get(key)
        if cand is None:
            cand = enumerate_layouts(m, tr, cl)
        if len(cand) == 0:
            reasons[i] = (f"no valid layout of {m.name} on {spec.num_gpus} GPUs with global "
                          f"batch {tr.global_batch_seqs}")
            enumerated[key] = cand
            continue
        try:
            res = evaluate_layouts(m, tr, cl, cand)
        except ValueError as exc:  # e.g. fp8 requested on a GPU without fp8 tensor cores
            reasons[i] = str(exc)
            enumerated[key] = cand
            continue
        evaluated += len(cand)
        score = np.where(res.fits, res.step_time_s, np.inf)
        if key not in enumerated:
            keep = np.argsort(score)[:top_k_reuse] if top_k_reuse else np.arange(len(cand))
            enumerated[key] = _take(cand, keep.astype(np.int64))
        if not res.fits.any():
            j = int(np.argmin(res.memory.total_bytes))
            reasons[i] = (f"no layout fits in {spec.gpu.hbm_gbytes:g} GB: the smallest needs "
                          f"{res.memory.total_bytes[j] / 1e9:.1f} GB per GPU")
            continue
        j = int(np.argmin(score))
        fits[i] = True
        tps[i], step[i], mfu[i] = res.tokens_per_s[j], res.step_time_s[j], res.mfu[j]
        for k in LAYOUT_FIELDS:
            lay[k][i] = int(getattr(cand, k)[j])
        tp_s, cp_s = float(res.tp_comm_exposed_s[j]), float(res.cp_comm_exposed_s[j])
        steps["compute_s"][i] = float(res.compute_s[j]) - tp_s - cp_s
        steps["tp_comm_exposed_s"][i], steps["cp_comm_exposed_s"][i] = tp_s, cp_s
        steps["pipeline_bubble_s"][i] = res.bubble_s[j]
        for k in ("pp_comm_s", "dp_comm_exposed_s", "optimizer_s", "data_stall_s"):
            steps[k][i] = getattr(res, k)[j]
    gpus = np.array([s.num_gpus for s in specs], dtype=np.float64)
    useful = np.where(fits, useful_fractions(m.total_params, np.maximum(gpus, 1.0),
                                             fail.failures_per_gpu_hour, fail), 0.0)
    notes: tuple[str, ...] = ()
    if top_k_reuse:
        notes = (f"layout search shortcut: fabric/oversubscription variants re-evaluate the "
                 f"{top_k_reuse} best layouts of the first variant of each cluster size",)
    return ClusterArrays(tuple(specs), fits, tps, step, mfu, lay, steps, useful,
                         tuple(reasons), evaluated, notes)


def _take(lay: Layouts, idx: IntArray) -> Layouts:
    return Layouts(*(getattr(lay, k)[idx] for k in LAYOUT_FIELDS))


def useful_fraction_with_interruptions(m: ModelShape, gpus: FloatArray,
                                       gpus_per_node: FloatArray,
                                       interruption_per_node_hour: FloatArray,
                                       failures: FailureConfig | None = None) -> FloatArray:
    """Goodput when spot reclaims add to hardware failures, for many jobs in one call: the
    job's failure rate is hardware (per GPU-hour x GPUs) + interruptions (per node-hour x
    nodes); the throughput model's Young/Daly checkpoint model (failures.py) does the rest."""
    fail = failures or FailureConfig()
    rate = fail.failures_per_gpu_hour + interruption_per_node_hour / gpus_per_node
    return useful_fractions(m.total_params, gpus, rate, fail)
