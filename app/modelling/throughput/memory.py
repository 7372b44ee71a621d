"""Memory per GPU during training, vectorised over layouts.

Weights/grads/optimizer: Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054) Sec. 3.1 - mixed
precision Adam keeps 2 (bf16 weights) + grad_bytes + 12 (fp32 master, m, v) bytes/param;
ZeRO-1 (== Megatron distributed optimizer) shards the 12 over DP, ZeRO-2 also the grads,
ZeRO-3/FSDP also the weights. Activations: Korthikanti et al. 2022 (arXiv:2205.05198)
Sec. 4, generalised to GQA and gated MLPs; pipeline in-flight micro-batches per their eq. 5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.modelling.throughput.config import BoolArray, FloatArray, Layouts, TrainingConfig
from app.modelling.throughput.model import ModelShape

# CUDA context, NCCL buffers and allocator fragmentation: reserve 8% + 2 GiB of HBM
# (assumption; PyTorch caching allocator commonly leaves 5-10% unusable).
_RESERVED_FRACTION = 0.08
_RESERVED_BYTES = 2.0 * 2**30


@dataclass(frozen=True)
class MemoryArrays:
    """Per-GPU bytes for each layout (worst pipeline stage)."""

    weights_bytes: FloatArray
    grads_bytes: FloatArray
    optimizer_bytes: FloatArray
    activations_bytes: FloatArray
    total_bytes: FloatArray
    usable_bytes: float
    fits: BoolArray


def usable_hbm_bytes(hbm_gbytes: float) -> float:
    """HBM the model can use after the runtime reserve."""
    return hbm_gbytes * 1e9 * (1.0 - _RESERVED_FRACTION) - _RESERVED_BYTES


def params_per_gpu(m: ModelShape, lay: Layouts) -> FloatArray:
    """Parameters on the worst stage: its layers / TP plus one embedding matrix / TP."""
    tp = lay.tp.astype(np.float64)
    pp = lay.pp.astype(np.float64)
    layers = np.ceil(m.layers / pp)
    emb = np.where(pp > 1, m.vocab * m.hidden, m.embedding_params)
    return (layers * m.params_per_layer + emb) / tp


def activation_bytes_per_layer(m: ModelShape, tr: TrainingConfig, lay: Layouts) -> FloatArray:
    """Korthikanti 2022 eq. 1-2 per layer per micro-batch: s*b*h*(34 + 5*a*s/h) bytes for
    GPT (ffn=4h, MHA). Generalised: replicated part 10*s*b*h (norm inputs, GEMM inputs,
    dropout masks), TP-sharded part s*b*h*(4 + 4*kv/a) attention + (6|4)*ffn*s*b MLP, score
    part 5*a*s^2*b (dropped by flash attention). Sequence parallelism shards the replicated
    part; context parallelism divides the sequence."""
    tp = lay.tp.astype(np.float64)
    cp = lay.cp.astype(np.float64)
    b = lay.microbatch.astype(np.float64)
    s, h = float(m.seq_len), float(m.hidden)
    tokens = b * s / cp
    kv_ratio = m.kv_heads / m.heads
    replicated = 10.0 * h * tokens / (tp if tr.sequence_parallel else 1.0)
    sharded = (tokens * h * (4.0 + 4.0 * kv_ratio)
               + tokens * m.ffn * (6.0 if m.gated_mlp else 4.0)) / tp
    scores = 0.0 if tr.flash_attention else 5.0 * m.heads * s * tokens / tp
    if tr.recompute == "full":
        return 2.0 * h * tokens / (tp if tr.sequence_parallel else 1.0)
    if tr.recompute == "selective":
        return replicated + sharded
    return replicated + sharded + scores


def memory_per_gpu(m: ModelShape, tr: TrainingConfig, lay: Layouts, hbm_gbytes: float,
                   micro_batches: FloatArray) -> MemoryArrays:
    """Memory breakdown of the worst stage and whether it fits in usable HBM."""
    params = params_per_gpu(m, lay)
    dp = lay.dp.astype(np.float64) * lay.cp.astype(np.float64)  # CP ranks also share states
    pp = lay.pp.astype(np.float64)
    v = lay.interleave.astype(np.float64)
    shard_opt = tr.distributed_optimizer or tr.zero_stage >= 1
    weights = params * 2.0 / (dp if tr.zero_stage >= 3 else 1.0)
    grads = params * tr.grad_bytes / (dp if tr.zero_stage >= 2 else 1.0)
    optimizer = params * 12.0 / (dp if shard_opt else 1.0)
    if tr.precision == "fp8":
        weights = weights * 1.5  # fp8 copies of the GEMM weights next to the bf16 ones
    per_layer = activation_bytes_per_layer(m, tr, lay)
    # 1F1B: the first stage holds min(p, m) micro-batches of its L/p layers; interleaving adds
    # a (1 + (p-1)/(p*v)) factor (Korthikanti 2022 eq. 5).
    in_flight = np.minimum(pp, micro_batches)
    interleave = np.where(v > 1, 1.0 + (pp - 1) / (pp * v), 1.0)
    layers_per_stage = np.ceil(m.layers / pp)
    acts = per_layer * layers_per_stage * in_flight * interleave
    if tr.recompute == "full":  # one layer is fully materialised while it is recomputed
        full = TrainingConfig(**{**tr.__dict__, "recompute": "none"})
        acts = acts + activation_bytes_per_layer(m, full, lay)
    # fp32 logits for the loss on the last stage: 4*s*b*V/(t*c) bytes (one micro-batch).
    logits = (4.0 * m.seq_len * lay.microbatch * m.vocab
              / (lay.tp * lay.cp)).astype(np.float64)
    acts = acts + logits
    total = weights + grads + optimizer + acts
    usable = usable_hbm_bytes(hbm_gbytes)
    return MemoryArrays(weights, grads, optimizer, acts, total, usable, total <= usable)
