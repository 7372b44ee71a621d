"""Hand-worked unit tests: the arithmetic is written out in each test."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from app.hardware.catalog import fabric, gpu, load_fabrics, load_gpus
from app.modelling.throughput import (
    ClusterConfig,
    Layout,
    LayoutError,
    ModelShape,
    TrainingConfig,
    estimate,
    kv_bytes_per_token,
    kv_cache,
    preset,
    search_layouts,
)
from app.modelling.throughput.collectives import (
    allreduce_s,
    loss_throughput_factor,
    p2p_s,
    reduce_scatter_s,
    ring_allreduce_s,
)
from app.modelling.throughput.failures import (
    FailureConfig,
    daly_interval_s,
    goodput,
    young_interval_s,
)
from app.modelling.throughput.flops import model_flops_per_token, six_n_flops_per_token
from app.modelling.throughput.memory import stage_layers, valid_stages


def _cluster(nodes: int = 1, scale_out: str = "InfiniBand NDR", nics: int = 8,
             gbits: float = 400.0, name: str = "H100 SXM 80GB") -> ClusterConfig:
    return ClusterConfig(gpu=gpu(name), gpus_per_node=8, nodes=nodes,
                         scale_up=fabric("NVLink4"), scale_out=fabric(scale_out),
                         nics_per_node=nics, nic_gbits_per_s=gbits)


def test_catalog_covers_required_hardware() -> None:
    gpus, fabs = load_gpus(), load_fabrics()
    for name in ("A100 SXM 80GB", "H100 SXM 80GB", "H200 SXM 141GB", "B200 SXM 180GB",
                 "MI300X", "MI350X", "L40S"):
        assert name in gpus
    for name in ("InfiniBand HDR", "InfiniBand NDR", "InfiniBand XDR", "RoCEv2 tuned",
                 "RoCEv2 untuned", "Ethernet TCP 100G", "AWS EFA v2", "AWS EFA v3", "NVLink3",
                 "NVLink4", "NVLink5", "PCIe Gen4", "PCIe Gen5"):
        assert name in fabs
    assert gpus["H100 SXM 80GB"].peak_bf16_tflops == 989


def test_six_n_t_for_small_model() -> None:
    # 2 layers, h=64, ffn=256 (GELU), MHA: per layer 4*64^2 + 2*64*256 + 2*64 = 49,280;
    # embeddings tied 1000*64 = 64,000; final norm 64 -> N = 2*49,280 + 64,000 + 64.
    m = ModelShape("tiny", 2, 64, 256, 4, 4, 1000, 128, gated_mlp=False, tied_embeddings=True)
    n = 2 * 49_280 + 64_000 + 64
    assert m.total_params == n
    assert six_n_flops_per_token(m) == 6 * n
    # MFU convention: 3 x (2 per weight of the layer GEMMs + causal attention 2*s*h per
    # layer + logits 2*h*V) per token.
    per_layer = 2 * (4 * 64 * 64 + 2 * 64 * 256) + 2 * 128 * 64
    assert model_flops_per_token(m) == pytest.approx(3 * (2 * per_layer + 2 * 64 * 1000))


def test_ring_allreduce_alpha_beta() -> None:
    # p=8, S=1 GB, B=100 GB/s, alpha=10 us: 2*7/8*1e9/1e11 + 2*7*1e-5 = 0.0175 + 0.00014.
    t = ring_allreduce_s(1e9, 8, 100e9, 10e-6)
    assert float(t) == pytest.approx(2 * 7 / 8 * 1e9 / 100e9 + 2 * 7 * 10e-6)
    # reduce-scatter is half the bytes and half the steps.
    assert float(reduce_scatter_s(1e9, 8, 100e9, 10e-6)) == pytest.approx(
        7 / 8 * 0.01 + 7 * 10e-6)
    assert float(p2p_s(1e6, 1e9, 5e-6)) == pytest.approx(1e-3 + 5e-6)
    # in-network reduction (SHARP) moves S once: 0.01 + 2 alpha < ring.
    assert float(allreduce_s(1e9, 8, 100e9, 10e-6, True)) == pytest.approx(0.01 + 2e-5)
    assert float(ring_allreduce_s(1e9, 1, 100e9, 10e-6)) == 0.0


def test_packet_loss_penalises_lossy_fabrics_only() -> None:
    link = 50e9
    assert loss_throughput_factor(fabric("InfiniBand NDR"), 0.01, link) == 1.0
    roce = fabric("RoCEv2 untuned")
    # go-back-N: W = 50e9 B/s * 64 us / 4096 B = 781 packets; 1/(1 + 0.01*781) = 0.11...
    w = link * 4 * roce.latency_us * 1e-6 / 4096
    assert loss_throughput_factor(roce, 0.01, link) == pytest.approx(1 / (1 + 0.01 * w))
    assert loss_throughput_factor(roce, 1e-6, link) > 0.99


def test_kv_cache_llama2_7b_4k() -> None:
    m = preset("llama2-7b")
    assert kv_bytes_per_token(m) * 4096 == 2 * 32 * 4096 * 4096 * 2  # 2.1 GB (MHA)
    gqa = preset("llama2-70b")  # 8 KV heads of 128 dims
    assert kv_bytes_per_token(gqa) == 2 * 80 * 8 * 128 * 2
    # seed 000 claims a 7B model needs ~120 GB of KV at 1M tokens; the arithmetic is
    # 2*32*4096*2**20*2 = 550 GB, so context parallelism over >= 4 H200s, not "4-8 GPUs
    # because 120 GB does not fit".
    est = kv_cache(m, 2**20, 141.0)
    assert est.kv_bytes == 2 * 32 * 4096 * 2**20 * 2
    assert est.gpus_needed >= 4


def test_young_and_daly_interval() -> None:
    delta, mtbf = 60.0, 36_000.0
    assert young_interval_s(delta, mtbf) == pytest.approx(math.sqrt(2 * 60 * 36_000))
    x = delta / (2 * mtbf)
    assert daly_interval_s(delta, mtbf) == pytest.approx(
        math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta)
    assert daly_interval_s(3 * mtbf, mtbf) == mtbf


def test_failure_rate_scales_with_gpus_and_blocking_checkpoints_cost_more() -> None:
    small = goodput(70e9, 512, FailureConfig())
    big = goodput(70e9, 16384, FailureConfig())
    assert small.mtbf_s == pytest.approx(32 * big.mtbf_s)
    # Llama 3: 419 failures / 54 days on 16,384 GPUs -> MTBF ~ 3.1 h at that size.
    assert big.mtbf_s / 3600 == pytest.approx(54 * 24 / 419)
    sync = goodput(70e9, 16384, FailureConfig(async_checkpoint=False,
                                              storage_write_gbytes_per_s=10.0))
    assert sync.checkpoint_blocking_s == pytest.approx(70e9 * 14 / 10e9)
    assert sync.useful_fraction < big.useful_fraction < 1.0


def test_invalid_layouts_name_the_reason() -> None:
    m, tr, cl = preset("llama2-7b"), TrainingConfig(global_batch_seqs=64), _cluster()
    with pytest.raises(LayoutError, match="does not divide 32 attention heads"):
        estimate(m, tr, cl, Layout(tp=3, dp=1, pp=1))
    with pytest.raises(LayoutError, match="cluster has 8 GPUs"):
        estimate(m, tr, cl, Layout(tp=2, dp=2))
    with pytest.raises(ValueError, match="at least one node"):
        replace(cl, nodes=0)


def test_70b_adam_on_one_node_does_not_fit() -> None:
    """Seed claim that follows from physics: 70B with Adam on 8x80 GB cannot train without
    offload: 70e9 * 18 B = 1.26 TB of states vs 640 GB of HBM."""
    m, tr = preset("llama2-70b"), TrainingConfig(global_batch_seqs=64)
    est = estimate(m, tr, _cluster(), Layout(tp=8, dp=1, pp=1))
    assert not est.fits
    assert "does not fit" in est.reason
    assert "optimizer" in est.reason
    auto = estimate(m, tr, _cluster())
    assert not auto.fits
    assert auto.reason.startswith("does not fit")


def test_slow_network_markedly_slower_for_70b_on_64_gpus() -> None:
    """TP8 in the node, PP2, DP4 across nodes (the seed's layout family): untuned RoCE and a
    single 100 GbE NIC per node must be markedly slower than 8x NDR400."""
    m, tr = preset("llama2-70b"), TrainingConfig(global_batch_seqs=512)
    lay = Layout(tp=8, pp=2, dp=4, microbatch=1)
    ndr = estimate(m, tr, _cluster(8), lay)
    roce = estimate(m, tr, _cluster(8, "RoCEv2 untuned"), lay)
    eth = estimate(m, tr, _cluster(8, "Ethernet TCP 100G", nics=1, gbits=100), lay)
    assert ndr.fits
    assert roce.tokens_per_s < 0.9 * ndr.tokens_per_s
    assert eth.tokens_per_s < 0.6 * ndr.tokens_per_s
    # FSDP-style pure data parallel leans on the network even harder.
    fsdp_tr = TrainingConfig(global_batch_seqs=512, zero_stage=3, recompute="full")
    fsdp = Layout(tp=1, dp=64, microbatch=1)
    assert (estimate(m, fsdp_tr, _cluster(8, "Ethernet TCP 100G", nics=1, gbits=100),
                     fsdp).tokens_per_s
            < 0.3 * estimate(m, fsdp_tr, _cluster(8), fsdp).tokens_per_s)


def test_oversubscription_and_mixed_generations_slow_things_down() -> None:
    m, tr = preset("llama2-70b"), TrainingConfig(global_batch_seqs=512, zero_stage=3)
    lay = Layout(tp=8, dp=16)
    base = _cluster(16)
    over = replace(base, oversubscription=4.0, nodes_per_leaf=4)
    assert estimate(m, tr, over, lay).tokens_per_s < estimate(m, tr, base, lay).tokens_per_s
    # Mixed generations, on a compute-bound recipe (ZeRO-3 above is network-bound, where a
    # slower GPU barely shows): TP8 PP2 DP8 with the distributed optimizer.
    mixed = replace(base, other_gpus=(gpu("A100 SXM 80GB"),))
    tr, lay = TrainingConfig(global_batch_seqs=512), Layout(tp=8, pp=2, dp=8)
    slow = estimate(m, tr, mixed, lay)
    fast = estimate(m, tr, base, lay)
    assert slow.tokens_per_s < 0.9 * fast.tokens_per_s
    assert slow.step.compute_s > 2.0 * fast.step.compute_s  # 312 vs 989 TFLOP/s peak
    assert "A100" in slow.notes[0]


def test_step_breakdown_sums_and_memory_sums() -> None:
    est = estimate(preset("llama3-8b"), TrainingConfig(global_batch_seqs=256), _cluster(4))
    s = est.step
    parts = (s.compute_s + s.tp_comm_exposed_s + s.cp_comm_exposed_s + s.pipeline_bubble_s
             + s.pp_comm_s + s.dp_comm_exposed_s + s.optimizer_s + s.data_stall_s)
    assert parts == pytest.approx(s.step_time_s)
    mm = est.memory
    assert mm.total_bytes == pytest.approx(mm.weights_bytes + mm.grads_bytes
                                           + mm.optimizer_bytes + mm.activations_bytes)
    assert est.fits
    assert 0.2 < est.mfu < 0.7
    assert est.tokens_per_day == pytest.approx(86400 * est.tokens_per_s)


def test_search_is_vectorised_and_ranks_by_throughput() -> None:
    m = preset("gpt3-175b")
    res = search_layouts(m, TrainingConfig(global_batch_seqs=1536), _cluster(128))
    assert res.evaluated > 500
    assert res.any_fit
    fit = res.results.fits
    times = res.results.step_time_s[fit]
    assert np.all(np.diff(times) >= 0)
    assert np.all(res.layouts.tp <= 8)
    assert np.all(res.layouts.tp * res.layouts.pp * res.layouts.dp * res.layouts.cp == 1024)


def test_data_loading_stall_when_storage_is_slow() -> None:
    m = preset("llama3-8b")
    tr = TrainingConfig(global_batch_seqs=256, sample_bytes_per_token=2e4)  # image-like
    fast = estimate(m, tr, _cluster(4), Layout(tp=1, dp=32, microbatch=1))
    slow = estimate(m, tr, replace(_cluster(4), storage_gbytes_per_s=1.0),
                    Layout(tp=1, dp=32, microbatch=1))
    assert fast.step.data_stall_s == 0.0
    assert slow.step.data_stall_s > 0.0


def test_uneven_pipeline_stages_llama3_405b() -> None:
    """Llama 3 405B: 126 layers on PP16 (arXiv:2407.21783 Sec. 3.3.2) - pp does not divide
    the layers. Without interleaving: chunks of ceil(126/16) = 8, shortfall 16*8 - 126 = 2,
    one layer off the first and one off the last stage -> 7, 8 x 14, 7. With interleave 8:
    128 chunks of 1 layer, shortfall 2 -> an embedding-only first chunk and a loss-only
    last chunk (Llama 3's own split): a middle rank holds 8 layers, the ends 7."""
    m = preset("llama3-405b")
    full, first, last = stage_layers(m, np.array([16.0]))
    assert (float(full[0]), float(first[0]), float(last[0])) == (8.0, 7.0, 7.0)
    assert m.layers == 14 * 8 + 7 + 7
    full, first, last = stage_layers(m, np.array([16.0]), 8.0)
    assert (float(full[0]), float(first[0]), float(last[0])) == (8.0, 7.0, 7.0)
    # 126 layers on 64 stages: chunks of 2, shortfall 2 -> ends of 1 layer; on 100 stages
    # chunks of 2 would leave a shortfall of 74: invalid, and the error says why.
    assert bool(valid_stages(m, np.array([64.0]))[0])
    assert not bool(valid_stages(m, np.array([100.0]))[0])
    tr = TrainingConfig(global_batch_seqs=2048, recompute="full")
    cl = _cluster(2048, "RoCEv2 tuned")
    lay = Layout(tp=8, pp=16, dp=128, microbatch=1, interleave=8)
    est = estimate(m, tr, cl, lay)
    assert est.fits
    # Bubble of the biggest stage: (p-1)/v = 15/8 of one micro-batch of 8 layers; the step
    # has m = 2048/128 = 16 micro-batches of it, so bubble / compute-incl-comm = 15/8/16.
    s = est.step
    assert s.pipeline_bubble_s == pytest.approx(
        (s.compute_s + s.tp_comm_exposed_s) * 15 / 8 / 16, rel=1e-6)
    flat = estimate(m, tr, cl, Layout(tp=8, pp=16, dp=128, microbatch=1))
    assert est.tokens_per_s > 1.3 * flat.tokens_per_s  # interleaving shrinks the bubble 8x
    with pytest.raises(LayoutError, match="only the first and the last model chunk"):
        estimate(m, tr, cl, Layout(tp=8, pp=64, dp=32, interleave=4))  # 256 chunks


def test_auto_search_uses_uneven_stages_for_405b() -> None:
    """Before uneven stages the search needed pp | 126 (1, 2, 3, 6, 7, 9, 14, ...) and
    settled near 23% MFU on 16,384 H100; now power-of-two pipelines with shorter end
    stages are candidates and the best layout lands well above that."""
    m = preset("llama3-405b")
    best = estimate(m, TrainingConfig(global_batch_seqs=2048), _cluster(2048, "RoCEv2 tuned"))
    assert best.fits
    assert m.layers % best.layout.pp != 0 or best.layout.interleave > 1
    assert best.mfu > 0.35


def test_tensor_parallel_across_two_nodes_is_two_level() -> None:
    """TP16 on 2 DGX A100 (4x HDR per node): each of the 4 TP all-reduces per layer and
    micro-batch moves S = tok*h*2 bytes = 2048*3072*2 = 12.58 MB as NVLink reduce-scatter
    + all-gather over 8 GPUs (each 7/8*S/B_up + 7*alpha_up) and an all-reduce of S/8 over
    the 2 nodes (ring n=2: S/8/B_out + 2*alpha_out), not a flat 16-rank ring at NIC speed.
    B_up = 300 GB/s * 0.80, B_out = 4*25 GB/s / 8 GPUs * 0.85, alphas 3.4 and 14 us."""
    m = ModelShape("t", 30, 3072, 12288, 32, 32, 51200, 2048, gated_mlp=False,
                   tied_embeddings=True)
    tr = TrainingConfig(global_batch_seqs=8, recompute="none", sequence_parallel=False,
                        flash_attention=False)
    cl = ClusterConfig(gpu=gpu("A100 SXM 80GB"), gpus_per_node=8, nodes=2,
                       scale_up=fabric("NVLink3"), scale_out=fabric("InfiniBand HDR"),
                       nics_per_node=4, nic_gbits_per_s=200.0)
    est = estimate(m, tr, cl, Layout(tp=16, dp=1, microbatch=1))
    s = 2048 * 3072 * 2.0
    b_up, b_out = 300e9 * 0.80, 4 * 25e9 / 8 * 0.85
    one = 2 * (7 / 8 * s / b_up + 7 * 3.4e-6) + (s / 8 / b_out + 2 * 14e-6)
    assert est.step.tp_comm_exposed_s == pytest.approx(8 * 30 * 4 * one, rel=1e-9)
    flat = 2 * 15 / 16 * s / b_out  # what a flat ring at NIC speed would cost (bytes only)
    assert one < flat / 4


def test_zero3_gathers_are_priced_flat_per_gpu() -> None:
    """Llama-2 7B, ZeRO-3 over 64 GPUs on one 100 GbE NIC per node, full recompute, bf16
    reductions: per micro-batch 3 weight all-gathers (forward, recompute, backward) of 2 B
    and a 2 B gradient reduce-scatter = (3*2 + 2)/2 = 4 B/param all-reduce-equivalent, as a
    flat 64-rank ring at the GPU's NIC share 100 Gb/s / 8 * 0.60 (TCP loss factor 1 at the
    default 1e-4 with 8 flows); 90% of the compute hides it."""
    m = preset("llama2-7b")
    params = m.layers * m.params_per_layer + m.embedding_params
    tr = TrainingConfig(global_batch_seqs=64, zero_stage=3, recompute="full", grad_bytes=2)
    cl = _cluster(8, "Ethernet TCP 100G", nics=1, gbits=100.0)
    est = estimate(m, tr, cl, Layout(tp=1, dp=64, microbatch=1))
    bw = 100e9 / 8 / 8 * 0.60
    ring = 2 * 63 / 64 * 4.0 * params / bw + 2 * 63 * 30e-6
    window = 0.9 * est.step.compute_s
    assert est.step.dp_comm_exposed_s == pytest.approx(ring - window, rel=1e-9)


def test_tied_embedding_gradients_cross_the_pipeline() -> None:
    """GPT with tied embeddings on PP2 over 2 nodes (TP8 inside each): per micro-batch 2 hops
    of the tok*h*2 activation (SP off), over m + p - 1 = 4 + 1 slots, plus one all-reduce of
    the V*h/8 fp32 embedding gradient between the first and the last stage (ring of 2:
    S/B + 2*alpha). B = 8 x 400 Gb/s / 8 GPUs * 0.85, alpha 14 us."""
    m = ModelShape("g", 4, 4096, 16384, 32, 32, 51200, 2048, gated_mlp=False,
                   tied_embeddings=True)
    tr = TrainingConfig(global_batch_seqs=4, sequence_parallel=False)
    est = estimate(m, tr, _cluster(2), Layout(tp=8, pp=2, dp=1, microbatch=1))
    bw = 400e9 / 8 * 0.85
    hop = 2048 * 4096 * 2.0 / bw + 14e-6
    emb = 51200 * 4096 / 8 * 4.0 / bw + 2 * 14e-6
    assert est.step.pp_comm_s == pytest.approx(2 * (4 + 1) * hop + emb, rel=1e-9)
