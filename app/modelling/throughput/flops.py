"""FLOP counts of a dense decoder (Narayanan et al. 2021, arXiv:2104.04473, Sec. 5.1 / App.).

Convention for MFU (model FLOPs utilisation) everywhere in this package: forward+backward =
3x the forward matmul FLOPs, no recomputation, causal attention counted as HALF of the s^2
score/value products (what a causal kernel must do). Narayanan 2021 eq. (3) and the
Megatron-Core formula count attention non-causal (full s^2) and Narayanan's 96*B*s*l*h^2
(1 + s/6h + V/16lh) also counts the recompute forward; validate.py converts between them.
"""

from __future__ import annotations

import numpy as np

from app.modelling.throughput.config import FloatArray
from app.modelling.throughput.model import ModelShape


def gemm_flops_per_token_layer(m: ModelShape) -> tuple[float, float, float, float]:
    """Forward FLOPs per token of the four weight GEMMs of one layer: QKV, O, MLP-in, MLP-out.

    2 FLOPs per multiply-add (Narayanan 2021 App. A): QKV 2h(h + 2*kv*d), O 2h^2,
    MLP-in 2h*ffn*(1|2 for gated), MLP-out 2*ffn*h.
    """
    h, kv_dim = m.hidden, m.kv_heads * m.head_dim
    return (2.0 * h * (h + 2 * kv_dim), 2.0 * h * h,
            2.0 * h * m.ffn * (m.mlp_matrices - 1), 2.0 * m.ffn * h)


def attention_flops_per_seq_layer(m: ModelShape, causal: bool) -> float:
    """Forward FLOPs of QK^T and AV for one sequence in one layer: 4*s^2*h (x0.5 causal).

    Narayanan 2021 counts 4*B*s^2*h per layer forward (full matrix).
    """
    full = 4.0 * m.seq_len * m.seq_len * m.hidden
    return 0.5 * full if causal else full


def logits_flops_per_token(m: ModelShape) -> float:
    """Output projection forward: 2*h*V per token (Narayanan 2021 eq. 3, V/16lh term)."""
    return 2.0 * m.hidden * m.vocab


def model_flops_per_token(m: ModelShape) -> float:
    """Training FLOPs per token under the MFU convention above (3x forward, causal)."""
    per_layer = sum(gemm_flops_per_token_layer(m)) + attention_flops_per_seq_layer(
        m, causal=True) / m.seq_len
    return 3.0 * (m.layers * per_layer + logits_flops_per_token(m))


def six_n_flops_per_token(m: ModelShape) -> float:
    """The 6*N rule of Kaplan et al. 2020 (ignores attention scores), N = all parameters."""
    return 6.0 * m.total_params


def narayanan_flops_per_iteration(m: ModelShape, batch_seqs: int, recompute: bool) -> float:
    """Narayanan 2021 eq. (3): 96*B*s*l*h^2*(1 + s/6h + V/16lh) with full recompute
    (their Table 1 convention); without recompute 72*B*s*l*h^2*(1 + s/6h + V/12lh), which is
    also the Megatron-Core 2024 / Korthikanti 2022 MFU formula for a GPT (ffn=4h, MHA)."""
    b, s, n_l, h, v = batch_seqs, m.seq_len, m.layers, m.hidden, m.vocab
    if recompute:
        return 96.0 * b * s * n_l * h * h * (1 + s / (6 * h) + v / (16 * n_l * h))
    return 72.0 * b * s * n_l * h * h * (1 + s / (6 * h) + v / (12 * n_l * h))


def hardware_flops_per_step(m: ModelShape, batch_seqs: FloatArray | float, recompute: str,
                            flash_attention: bool) -> FloatArray:
    """FLOPs actually executed (HFU numerator): adds the recompute forward; a non-flash kernel
    computes the full (unmasked) score matrix."""
    gemm = sum(gemm_flops_per_token_layer(m)) * m.seq_len
    attn = attention_flops_per_seq_layer(m, causal=flash_attention)
    fwd_layer = gemm + attn
    extra = {"none": 0.0, "selective": attn, "full": fwd_layer}[recompute]
    if flash_attention and recompute == "selective":
        extra = 0.0  # flash already recomputes scores in its backward kernel
    per_seq = m.layers * (3.0 * fwd_layer + extra) + 3.0 * logits_flops_per_token(m) * m.seq_len
    return np.asarray(batch_seqs, dtype=np.float64) * per_seq
