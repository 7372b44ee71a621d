"""Inference KV-cache memory and the GPUs context parallelism needs for a long context.

KV bytes per token = 2 (K and V) * layers * kv_heads * head_dim * bytes/element
(Pope et al. 2022, 'Efficiently scaling transformer inference', Sec. 3.1); grouped-query
attention (Ainslie et al. 2023) shrinks it by heads/kv_heads versus multi-head attention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.modelling.throughput.memory import usable_hbm_bytes
from app.modelling.throughput.model import ModelShape


@dataclass(frozen=True)
class KvCacheEstimate:
    kv_bytes_per_token: float
    kv_bytes: float  # for the whole context and batch
    weights_bytes: float
    gpus_needed: int  # tp * cp GPUs so weights/tp + kv/(tp*cp) fit on each
    context_parallel: int
    tensor_parallel: int


def kv_bytes_per_token(m: ModelShape, bytes_per_elem: float = 2.0) -> float:
    """2 * L * kv_heads * head_dim * bytes (MHA when kv_heads == heads)."""
    return 2.0 * m.layers * m.kv_heads * m.head_dim * bytes_per_elem


def kv_cache(m: ModelShape, context_tokens: int, hbm_gbytes: float, batch: int = 1,
             bytes_per_elem: float = 2.0, weight_bytes_per_param: float = 2.0,
             max_tp: int = 8) -> KvCacheEstimate:
    """KV cache for a context and the smallest tp*cp that holds it (ring attention splits
    the sequence, so KV divides by cp; weights are replicated over cp and split over tp)."""
    per_tok = kv_bytes_per_token(m, bytes_per_elem)
    kv = per_tok * context_tokens * batch
    weights = m.total_params * weight_bytes_per_param
    usable = usable_hbm_bytes(hbm_gbytes)
    tp = 1
    while weights / tp >= 0.9 * usable and tp < max_tp:
        tp *= 2
    room = usable - weights / tp
    if room <= 0:
        raise ValueError(f"{m.name} weights do not fit on {max_tp} GPUs of {hbm_gbytes} GB")
    cp = max(1, math.ceil(kv / tp / room))
    return KvCacheEstimate(per_tok, kv, weights, tp * cp, cp, tp)
