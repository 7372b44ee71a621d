"""Scalar front door: one configuration (or "auto") in, a full training estimate out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from app.modelling.throughput.config import ClusterConfig, Layouts, TrainingConfig
from app.modelling.throughput.failures import FailureConfig, Goodput, goodput
from app.modelling.throughput.layouts import search_layouts
from app.modelling.throughput.memory import usable_hbm_bytes, valid_stages
from app.modelling.throughput.model import ModelShape
from app.modelling.throughput.step import StepArrays, evaluate_layouts, slowest_gpu


class LayoutError(ValueError):
    """The requested configuration is impossible; the message names the reason."""


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    microbatch: int = 1
    interleave: int = 1


@dataclass(frozen=True)
class StepBreakdown:
    """Seconds per iteration; compute_s excludes the exposed communication listed beside it.
    The fields sum to step_time_s."""

    compute_s: float
    tp_comm_exposed_s: float
    cp_comm_exposed_s: float
    pipeline_bubble_s: float
    pp_comm_s: float
    dp_comm_exposed_s: float
    optimizer_s: float
    data_stall_s: float
    step_time_s: float


@dataclass(frozen=True)
class MemoryBreakdown:
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    total_bytes: float
    usable_bytes: float


@dataclass(frozen=True)
class TrainingEstimate:
    layout: Layout
    step: StepBreakdown
    memory: MemoryBreakdown
    fits: bool
    reason: str  # empty when it fits
    tokens_per_s: float
    tokens_per_day: float
    mfu: float
    hfu: float
    goodput: Goodput
    useful_tokens_per_day: float  # after failures, checkpoints and restarts
    time_to_train_s: float  # wall clock for TrainingConfig.total_tokens, incl. failures
    layouts_evaluated: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)


def check_layout(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig, lay: Layout
                 ) -> str | None:
    """Human-readable reason the layout is invalid, or None."""
    n = cl.num_gpus
    if min(lay.tp, lay.pp, lay.dp, lay.cp, lay.microbatch, lay.interleave) < 1:
        return "all parallel degrees and the micro-batch must be >= 1"
    if m.heads % lay.tp:
        return f"tensor parallel {lay.tp} does not divide {m.heads} attention heads"
    if lay.tp * lay.pp * lay.dp * lay.cp != n:
        return (f"tp*pp*dp*cp = {lay.tp * lay.pp * lay.dp * lay.cp} but the cluster has "
                f"{n} GPUs")
    if m.kv_heads % min(lay.tp, m.kv_heads):
        return f"tensor parallel {lay.tp} does not divide {m.kv_heads} KV heads"
    if not bool(valid_stages(m, np.array([float(lay.pp)]), float(lay.interleave))[0]):
        return (f"pipeline {lay.pp} x interleave {lay.interleave} cannot split {m.layers} "
                f"layers: only the first and the last model chunk may be shorter")
    if lay.cp > 1 and m.seq_len % (2 * lay.cp):
        return f"context parallel {lay.cp} needs seq_len divisible by {2 * lay.cp}"
    if tr.global_batch_seqs % (lay.dp * lay.microbatch):
        return (f"global batch {tr.global_batch_seqs} not divisible by dp*micro-batch "
                f"{lay.dp * lay.microbatch}")
    micro = tr.global_batch_seqs // (lay.dp * lay.microbatch)
    if lay.interleave > 1 and (lay.pp == 1 or micro % lay.pp):
        return "interleaving needs pp > 1 and micro-batches divisible by pp"
    return None


def _memory_reason(mem: MemoryBreakdown, hbm_gbytes: float) -> str:
    gib = 1e9
    return (f"does not fit: needs {mem.total_bytes / gib:.1f} GB per GPU "
            f"(weights {mem.weights_bytes / gib:.1f}, grads {mem.grads_bytes / gib:.1f}, "
            f"optimizer {mem.optimizer_bytes / gib:.1f}, activations "
            f"{mem.activations_bytes / gib:.1f}) but only {mem.usable_bytes / gib:.1f} GB of "
            f"{hbm_gbytes:g} GB is usable")


def _pick(res: StepArrays, i: int, lay: Layout, m: ModelShape, tr: TrainingConfig,
          cl: ClusterConfig, fail: FailureConfig, evaluated: int) -> TrainingEstimate:
    tp_s, cp_s = float(res.tp_comm_exposed_s[i]), float(res.cp_comm_exposed_s[i])
    step = StepBreakdown(
        compute_s=float(res.compute_s[i]) - tp_s - cp_s, tp_comm_exposed_s=tp_s,
        cp_comm_exposed_s=cp_s, pipeline_bubble_s=float(res.bubble_s[i]),
        pp_comm_s=float(res.pp_comm_s[i]), dp_comm_exposed_s=float(res.dp_comm_exposed_s[i]),
        optimizer_s=float(res.optimizer_s[i]), data_stall_s=float(res.data_stall_s[i]),
        step_time_s=float(res.step_time_s[i]))
    mm = res.memory
    gpu = slowest_gpu(cl)
    mem = MemoryBreakdown(float(mm.weights_bytes[i]), float(mm.grads_bytes[i]),
                          float(mm.optimizer_bytes[i]), float(mm.activations_bytes[i]),
                          float(mm.total_bytes[i]), usable_hbm_bytes(gpu.hbm_gbytes))
    fits = bool(res.fits[i])
    tps = float(res.tokens_per_s[i])
    gp = goodput(m.total_params, cl.num_gpus, fail)
    useful = tps * gp.useful_fraction
    ttt = tr.total_tokens / useful if useful > 0 else float("inf")
    notes: tuple[str, ...] = ()
    if cl.other_gpus:
        notes = (f"mixed generations: runs at the pace of {gpu.name}",)
    return TrainingEstimate(
        layout=lay, step=step, memory=mem, fits=fits,
        reason="" if fits else _memory_reason(mem, gpu.hbm_gbytes),
        tokens_per_s=tps, tokens_per_day=tps * 86400.0, mfu=float(res.mfu[i]),
        hfu=float(res.hfu[i]), goodput=gp, useful_tokens_per_day=useful * 86400.0,
        time_to_train_s=ttt, layouts_evaluated=evaluated, notes=notes)


def estimate(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig,
             layout: Layout | None = None, failures: FailureConfig | None = None
             ) -> TrainingEstimate:
    """Estimate one layout, or search all layouts when layout is None ("auto").

    Raises LayoutError for an impossible layout. A layout that is valid but too big for
    HBM comes back with fits=False and the memory reason; with "auto" and nothing fitting,
    the least-bad layout is returned the same way.
    """
    fail = failures or FailureConfig()
    if layout is not None:
        why = check_layout(m, tr, cl, layout)
        if why:
            raise LayoutError(why)
        lays = Layouts.of(layout.tp, layout.pp, layout.dp, layout.cp, layout.microbatch,
                          layout.interleave)
        return _pick(evaluate_layouts(m, tr, cl, lays), 0, layout, m, tr, cl, fail, 1)
    found = search_layouts(m, tr, cl)
    if found.evaluated == 0:
        raise LayoutError(f"no valid layout of {m.name} on {cl.num_gpus} GPUs with global "
                          f"batch {tr.global_batch_seqs}")
    lays = found.layouts
    # Best fitting layout; if none fits, the one closest to fitting (least memory).
    i = 0 if found.any_fit else int(np.argmin(found.results.memory.total_bytes))
    best = Layout(int(lays.tp[i]), int(lays.pp[i]), int(lays.dp[i]), int(lays.cp[i]),
                  int(lays.microbatch[i]), int(lays.interleave[i]))
    return _pick(found.results, i, best, m, tr, cl, fail, found.evaluated)
