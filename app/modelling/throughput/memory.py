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


def stage_layers(m: ModelShape, pp: FloatArray, v: FloatArray | float = 1.0
                 ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Layers held by (a middle, the first, the last) pipeline rank over its v chunks.

    The L layers are cut into pp*v model chunks of ceil(L/(pp*v)) layers; when that does not
    divide L, the shortfall comes off the very first and the very last chunk, which also
    carry the embedding and the output layer + loss. Megatron-LM exposes this as
    --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers; Llama 3 405B
    (126 layers, PP16, interleaved) took one layer off the first and the last stage, leaving
    an embedding-only first chunk and a loss-only last chunk (Llama 3 Herd of Models,
    arXiv:2407.21783, Sec. 3.3.2). The last rank gives up the odd layer (it also runs the
    loss). valid_stages rejects splits that would need more than those two chunks.
    """
    vv = np.asarray(v, dtype=np.float64)
    chunk = np.ceil(m.layers / (pp * vv))
    short = chunk * pp * vv - m.layers
    full = chunk * vv
    last = np.where(pp > 1, full - np.ceil(short / 2.0), full)
    first = np.where(pp > 1, full - np.floor(short / 2.0), full)
    return full, first, last


def valid_stages(m: ModelShape, pp: FloatArray, v: FloatArray | float = 1.0) -> BoolArray:
    """The shortfall fits in the first and last chunk (each may end up empty)."""
    vv = np.asarray(v, dtype=np.float64)
    chunk = np.ceil(m.layers / (pp * vv))
    short = chunk * pp * vv - m.layers
    ok = (pp * vv <= m.layers + 2) & ((short == 0) | ((pp > 1) & (short <= 2 * chunk)))
    return np.asarray(ok, dtype=np.bool_)


def params_per_gpu(m: ModelShape, lay: Layouts) -> FloatArray:
    """Parameters on the largest stage / TP: a middle stage's layers, or the first stage's
    layers plus the input embedding (the last stage holds the output projection, or with
    tied embeddings a copy of the input one)."""
    tp = lay.tp.astype(np.float64)
    pp = lay.pp.astype(np.float64)
    full, first, last = stage_layers(m, pp, lay.interleave.astype(np.float64))
    per_emb = float(m.vocab * m.hidden)
    ends = np.maximum(first, last) * m.params_per_layer + per_emb
    worst = np.where(pp > 1, np.maximum(full * m.params_per_layer, ends),
                     full * m.params_per_layer + m.embedding_params)
    return worst / tp


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
    # With uneven stages the first (shorter) stage holds min(p, m) micro-batches and the
    # second, full, stage one fewer: take the larger.
    mid_layers, first_layers, _ = stage_layers(m, pp, v)
    held = np.where(pp > 1, np.maximum(first_layers * in_flight,
                                       mid_layers * np.minimum(pp - 1, micro_batches)),
                    mid_layers * in_flight)
    acts = per_layer * held * interleave
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
