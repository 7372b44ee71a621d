"""Step time of one training iteration, evaluated for an array of layouts in one pass.

Per micro-batch and pipeline stage: weight GEMMs at the calibrated achievable rate plus a
fixed per-GEMM overhead, attention (flash: calibrated fused rate; unfused: batched GEMMs plus
score-matrix HBM traffic), elementwise HBM traffic, recompute, and the exposed part of TP and
CP communication. The iteration is m micro-batches plus the 1F1B bubble (p-1)/v
(Narayanan 2021 Sec. 2.2), pipeline point-to-point, the exposed DP gradient collective,
the optimizer step and any data-loading stall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.modelling.throughput import calibration as cal
from app.modelling.throughput.collectives import (
    allreduce_s,
    hierarchical_allreduce_s,
    p2p_s,
    scale_out_bw_per_gpu,
    scale_up_bw_per_gpu,
)
from app.modelling.throughput.config import (
    BoolArray,
    ClusterConfig,
    FloatArray,
    Layouts,
    TrainingConfig,
)
from app.modelling.throughput.flops import (
    attention_flops_per_seq_layer,
    gemm_flops_per_token_layer,
    hardware_flops_per_step,
    model_flops_per_token,
)
from app.modelling.throughput.hardware import GpuSpec
from app.modelling.throughput.memory import (
    MemoryArrays,
    memory_per_gpu,
    params_per_gpu,
    stage_layers,
    valid_stages,
)
from app.modelling.throughput.model import ModelShape


@dataclass(frozen=True)
class StepArrays:
    """Per-layout results; every field has the layouts' shape. Times in seconds."""

    valid: BoolArray  # divisibility and GPU-count constraints hold
    fits: BoolArray  # memory fits in usable HBM
    micro_batches: FloatArray
    compute_s: FloatArray  # m micro-batches of the slowest stage (incl. exposed TP/CP comm)
    tp_comm_exposed_s: FloatArray
    cp_comm_exposed_s: FloatArray
    bubble_s: FloatArray
    pp_comm_s: FloatArray
    dp_comm_exposed_s: FloatArray
    optimizer_s: FloatArray
    data_stall_s: FloatArray
    step_time_s: FloatArray
    tokens_per_s: FloatArray
    mfu: FloatArray  # model FLOPs (flops.py convention) / (GPUs * dense bf16 peak)
    hfu: FloatArray  # executed FLOPs incl. recompute / (GPUs * dense bf16 peak)
    memory: MemoryArrays


def slowest_gpu(cluster: ClusterConfig) -> GpuSpec:
    """Synchronous data/pipeline parallel training runs at the slowest GPU's pace; memory is
    bounded by the smallest HBM (both taken from the weakest device)."""
    gpus = (cluster.gpu, *cluster.other_gpus)
    slow = min(gpus, key=lambda g: g.peak_bf16_tflops)
    hbm = min(g.hbm_gbytes for g in gpus)
    bw = min(g.hbm_tbytes_per_s for g in gpus)
    if hbm == slow.hbm_gbytes and bw == slow.hbm_tbytes_per_s:
        return slow
    return GpuSpec(**{**slow.__dict__, "hbm_gbytes": hbm, "hbm_tbytes_per_s": bw})


def _valid(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig, lay: Layouts) -> BoolArray:
    tp, pp, dp, cp, b, v = lay.tp, lay.pp, lay.dp, lay.cp, lay.microbatch, lay.interleave
    ok = (tp >= 1) & (pp >= 1) & (dp >= 1) & (cp >= 1) & (b >= 1) & (v >= 1)
    ok &= tp * pp * dp * cp == cl.num_gpus
    ok &= (m.heads % tp == 0) & (m.kv_heads % np.minimum(tp, m.kv_heads) == 0)
    ok &= valid_stages(m, pp.astype(np.float64), v.astype(np.float64))  # uneven ends ok
    ok &= ((m.seq_len % (2 * cp)) == 0) | (cp == 1)
    ok &= tr.global_batch_seqs % np.maximum(dp * b, 1) == 0
    ok &= (v == 1) | ((pp > 1) & ((tr.global_batch_seqs // np.maximum(dp * b, 1)) % pp == 0))
    return ok


def evaluate_layouts(m: ModelShape, tr: TrainingConfig, cl: ClusterConfig,
                     lay: Layouts) -> StepArrays:
    """Vectorised step-time model; see the module docstring for the terms and sources."""
    gpu = slowest_gpu(cl)
    c = cal.GPU_CALIBRATION[gpu.family]
    f = np.float64
    tp, pp, dp, cp = (x.astype(f) for x in (lay.tp, lay.pp, lay.dp, lay.cp))
    b, v = lay.microbatch.astype(f), lay.interleave.astype(f)
    s, h = float(m.seq_len), float(m.hidden)
    valid = _valid(m, tr, cl, lay)
    micro = tr.global_batch_seqs / np.maximum(dp * b, 1.0)

    bf16_peak = gpu.peak_bf16_tflops * 1e12
    if tr.precision == "fp8":
        if gpu.peak_fp8_tflops <= 0 or c.fp8_matmul_eff <= 0:
            raise ValueError(f"{gpu.name} has no fp8 tensor cores")
        gemm_rate = gpu.peak_fp8_tflops * 1e12 * c.fp8_matmul_eff
    else:
        gemm_rate = bf16_peak * c.matmul_eff
    hbm = gpu.hbm_tbytes_per_s * 1e12 * c.hbm_eff
    t0 = c.gemm_overhead_s
    tok = b * s / cp  # tokens per GPU per micro-batch
    sp = tp if tr.sequence_parallel else 1.0

    # Weight GEMMs: 4 forward calls, 8 backward (dgrad + wgrad).
    gemm_fwd_flops = sum(gemm_flops_per_token_layer(m)) * tok / tp
    gemm_fwd = gemm_fwd_flops / gemm_rate + 4 * t0
    gemm_bwd = 2 * gemm_fwd_flops / gemm_rate + 8 * t0
    # Attention core.
    if tr.flash_attention:
        attn_flops = attention_flops_per_seq_layer(m, causal=True) * b / (cp * tp)
        attn_total = 3.0 * attn_flops / (bf16_peak * c.flash_attn_eff)
        attn_fwd = attn_total / 3.0
        score_fwd = 0.0 * tok
    else:
        attn_flops = attention_flops_per_seq_layer(m, causal=False) * b / (cp * tp)
        attn_fwd = attn_flops / (bf16_peak * c.matmul_eff) + 2 * t0
        attn_total = 3.0 * attn_fwd
        score_fwd = cal.UNFUSED_SCORE_BYTES * b * m.heads * s * (s / cp) / tp / hbm
    # Elementwise HBM traffic (norms, dropout, residuals, activation function).
    mlp_elems = (3.0 if m.gated_mlp else 2.0) * m.ffn / tp
    elem_fwd = 2.0 * tok * (cal.ELEMENTWISE_HIDDEN_ELEMS * h / sp + mlp_elems) / hbm
    fwd = gemm_fwd + attn_fwd + elem_fwd + score_fwd
    bwd = (gemm_bwd + (attn_total - attn_fwd)
           + cal.BACKWARD_TRAFFIC_FACTOR * (elem_fwd + score_fwd))
    recompute = {"none": 0.0 * tok, "full": fwd,
                 "selective": 0.0 * tok if tr.flash_attention else attn_fwd + score_fwd}
    layer_compute = fwd + bwd + recompute[tr.recompute] + cal.LAYER_OVERHEAD_S

    # Tensor parallel: 2 all-reduces (or RS+AG with SP) forward, 2 backward, +2 on full
    # recompute, of tok*h bf16 values (Korthikanti 2022 Sec. 4.2.2).
    n_tp_coll = 6.0 if tr.recompute == "full" else 4.0
    up_bw, up_alpha = scale_up_bw_per_gpu(cl), cl.scale_up.latency_us * 1e-6
    out_alpha = cl.scale_out.latency_us * 1e-6
    gpn = float(cl.gpus_per_node)
    # TP spanning nodes (tp > gpus per node) runs NCCL's two-level algorithm: NVLink
    # reduce-scatter, all-reduce of 1/gpn of the bytes across tp/gpn nodes, NVLink
    # all-gather - so each node's NICs carry ~2S, not every GPU 2S (same as the DP path).
    tp_bytes = tok * h * 2.0
    tp_in_node = tp <= gpn
    tp_local = np.minimum(tp, gpn)
    tp_nodes = np.maximum(tp / gpn, 1.0)
    tp_intra = allreduce_s(tp_bytes, tp, up_bw, up_alpha, cl.scale_up.in_network_reduction)
    tp_inter = hierarchical_allreduce_s(tp_bytes, tp_local, tp_nodes, up_bw, up_alpha,
                                        scale_out_bw_per_gpu(cl, tp_nodes), out_alpha,
                                        cl.scale_out.in_network_reduction)
    tp_comm = n_tp_coll * np.where(tp_in_node, tp_intra, tp_inter)
    tp_exposed = tp_comm * ((1.0 - cal.TP_COMM_OVERLAP_FRACTION) if tr.tp_comm_overlap else 1.0)

    # Context parallel (ring attention, Liu et al. 2023): cp-1 KV-chunk hops forward, twice
    # that backward (KV and dKV), hidden behind the attention compute it overlaps with.
    kv_chunk = 2.0 * tok * m.kv_heads * m.head_dim * 2.0 / tp
    cp_in_node = tp * cp <= gpn
    cp_bw = np.where(cp_in_node, up_bw, scale_out_bw_per_gpu(cl, tp * cp / gpn))
    cp_alpha = np.where(cp_in_node, up_alpha, out_alpha)
    cp_comm = 3.0 * (cp - 1.0) * p2p_s(kv_chunk, cp_bw, cp_alpha)
    cp_exposed = np.maximum(cp_comm - attn_total, 0.0)

    # Output layer + cross-entropy on the last (critical) stage.
    logits_flops = 2.0 * tok * h * m.vocab / tp
    logits = (3.0 * logits_flops / gemm_rate + 3 * t0
              + 3.0 * 4.0 * tok * m.vocab / tp / hbm)
    # The slowest stage sets the pace: a full middle stage, or the (shorter) last stage
    # that also runs the output layer and loss.
    layers_per_stage, _, last_layers = stage_layers(m, pp, v)
    per_layer = layer_compute + tp_exposed + cp_exposed
    per_micro = np.maximum(layers_per_stage * per_layer, last_layers * per_layer + logits)
    compute = micro * per_micro
    bubble = (pp - 1.0) / v * per_micro

    # Data loading (Sec. 'data pipeline' of the issue): prefetched, so only a slower loader
    # stalls the step; when it shares the training network it also takes NIC bandwidth.
    step_bytes = tr.global_batch_seqs * s * tr.sample_bytes_per_token
    net_bytes_per_s = cl.node_bytes_per_s * cl.nodes
    data_fraction = 0.0
    if cl.data_shares_network:
        best = float(np.min(np.where(valid, compute + bubble, np.inf), initial=np.inf))
        if np.isfinite(best) and best > 0:
            data_fraction = min(0.9, step_bytes / best / net_bytes_per_s)
    load_s = step_bytes / (cl.storage_gbytes_per_s * 1e9)

    # Pipeline p2p: activations tok*h bf16 (scattered over TP), each micro-batch crosses each
    # stage boundary forward and backward (v times with interleaving).
    pp_cross = tp * cp * dp >= gpn
    pp_bw = np.where(pp_cross, scale_out_bw_per_gpu(cl, np.full_like(tp, cl.nodes),
                                                     data_fraction), up_bw)
    pp_alpha = np.where(pp_cross, out_alpha, up_alpha)
    pp_hop = p2p_s(tok * h * 2.0 / sp, pp_bw, pp_alpha)
    pp_comm = np.where(pp > 1, 2.0 * v * (micro + pp - 1.0) * pp_hop, 0.0)
    # Tied input/output embeddings live on the first and the last stage; after the flush
    # their gradients are all-reduced between those two ranks (Narayanan 2021 Sec. 4.1;
    # Megatron-LM finalize_model_grads._allreduce_word_embedding_grads), exposed.
    if m.tied_embeddings:
        emb_bytes = m.vocab * h / tp * float(tr.grad_bytes)
        pp_comm = pp_comm + np.where(pp > 1, allreduce_s(emb_bytes, 2.0, pp_bw, pp_alpha,
                                                         False), 0.0)

    # Data parallel over dp*cp replicas (ranks ordered tp, cp, dp, pp as in Megatron).
    params = params_per_gpu(m, lay)
    n_dp = dp * cp
    local = np.clip(gpn / (tp * cp), 1.0, n_dp)
    nodes_spanned = n_dp / local
    out_bw = scale_out_bw_per_gpu(cl, nodes_spanned, data_fraction)
    fab = cl.scale_out
    sharded = tr.distributed_optimizer or tr.zero_stage >= 1
    if tr.zero_stage >= 3:
        # Every micro-batch: all-gather bf16 weights for forward, again for the recompute
        # forward under full recompute, again for backward; reduce-scatter the grads.
        # Expressed as all-reduce-equivalent bytes (all-reduce = RS + AG).
        gathers = 3.0 if tr.recompute == "full" else 2.0
        bytes_eq = micro * params * (gathers * 2.0 + tr.grad_bytes) / 2.0
    elif sharded:  # RS grads + AG updated bf16 params
        bytes_eq = params * (tr.grad_bytes + 2.0) / 2.0
    else:
        bytes_eq = params * float(tr.grad_bytes)
    dp_time = hierarchical_allreduce_s(bytes_eq, local, nodes_spanned, up_bw, up_alpha,
                                       out_bw, out_alpha, fab.in_network_reduction)
    if tr.zero_stage >= 3:
        # ZeRO-3/FSDP gather each layer's shards from every DP rank, layer by layer, over
        # one flat communicator. Measured ZeRO-3 steps (Narayanan 2021 Table 2: per-GPU
        # TFLOP/s halves as GPUs double at a fixed batch) behave as if each GPU's whole
        # shard traffic crosses the fabric at its own NIC share, not the two-level optimum;
        # keeping gathers inside the node is what ZeRO++ hpZ / HSDP add (Wang et al. 2023,
        # arXiv:2306.10209). Priced flat.
        flat_bw = scale_out_bw_per_gpu(cl, n_dp * tp * cp / gpn, data_fraction)
        flat = allreduce_s(bytes_eq, n_dp, np.where(n_dp * tp * cp > gpn, flat_bw, up_bw),
                           np.where(n_dp * tp * cp > gpn, out_alpha, up_alpha), False)
        dp_time = flat
    dp_time = np.where(n_dp > 1, dp_time, 0.0)
    if tr.zero_stage >= 3:
        window = cal.DP_OVERLAP_FRACTION * compute
    elif tr.overlap_grad_reduce:
        window = cal.DP_OVERLAP_FRACTION * layers_per_stage * bwd
    else:
        window = 0.0 * compute
    dp_exposed = np.maximum(dp_time - window, 0.0)

    # Optimizer: fused Adam streams its states through HBM.
    opt_params = params / (n_dp if sharded else 1.0)
    optimizer = opt_params * cal.ADAM_STEP_BYTES_PER_PARAM / hbm

    busy = compute + bubble + pp_comm + dp_exposed + optimizer
    data_stall = np.maximum(load_s - busy, 0.0)
    step = busy + data_stall
    tokens_per_s = tr.global_batch_seqs * s / step
    n_gpus = float(cl.num_gpus)
    mfu = model_flops_per_token(m) * tokens_per_s / (n_gpus * bf16_peak)
    hfu = (hardware_flops_per_step(m, tr.global_batch_seqs, tr.recompute, tr.flash_attention)
           / step / (n_gpus * bf16_peak))
    mem = memory_per_gpu(m, tr, lay, gpu.hbm_gbytes, micro)
    return StepArrays(
        valid=valid, fits=mem.fits & valid, micro_batches=micro, compute_s=compute,
        tp_comm_exposed_s=micro * layers_per_stage * tp_exposed,
        cp_comm_exposed_s=micro * layers_per_stage * cp_exposed, bubble_s=bubble,
        pp_comm_s=pp_comm, dp_comm_exposed_s=dp_exposed, optimizer_s=optimizer,
        data_stall_s=data_stall, step_time_s=step, tokens_per_s=tokens_per_s, mfu=mfu,
        hfu=hfu, memory=mem,
    )
