"""Validate the throughput model against published training measurements.

One set of calibration constants (app/modelling/throughput/calibration.py + fabrics.csv)
predicts every row. Published per-GPU TFLOP/s are converted to iteration times with the
FLOP convention the source used (its own formula), so nothing depends on MFU conventions;
the table also shows MFU recomputed under the model's single convention for both sides.
Run with `pytest -s` to see the table.

vTrain (raw Megatron-DeepSpeed cluster measurements) was investigated row by row:
- TP=16 over two nodes was 4-5x over-predicted because TP across nodes was priced as a
  flat ring at per-GPU NIC bandwidth; NCCL runs it two-level (NVLink reduce-scatter, 1/8 of
  the bytes across nodes, NVLink all-gather). Modelled that way the 6 rows land within 16%
  and are scored.
- 3.6B TP8 micro-batch 64 (9.84 s vs 4.97 s at 32): same work in one micro-batch instead
  of two. The memory model puts it at 46 GB of 80 GB (27 GB at b32), so allocator pressure
  is not supported on an 80 GB A100; no mechanism makes a bigger GEMM slower per FLOP.
- 39.1B TP2: (t2, p8) does the same FLOPs per GPU as (t4, p4) with 1/3 of the TP traffic
  and wider GEMMs; only the bubble grows, by (m+7)/(m+3). A TP2-specific NVLink penalty
  would break the 175B TP2 rows, which the model meets within 4%.
- 3.6B TP4/TP8 at micro-batch 2: the per-micro-batch fixed cost implied by the b4/b8 pair
  predicts the b2 time within 2% at TP1/TP2 but 24-37% short at TP4/TP8.
Rows like these break bounds implied by the dataset's own numbers (inconsistent_rows) and
are printed as "excluded: reason", not scored.
"""

from __future__ import annotations

import csv
import itertools
import statistics
from dataclasses import dataclass
from pathlib import Path

from app.hardware.catalog import fabric, gpu
from app.modelling.throughput.config import ClusterConfig, Layouts, Recompute, TrainingConfig
from app.modelling.throughput.flops import model_flops_per_token, narayanan_flops_per_iteration
from app.modelling.throughput.model import ModelShape
from app.modelling.throughput.step import evaluate_layouts

DATA = Path(__file__).resolve().parents[1] / "data" / "validation"
MEDIAN_LIMIT, WORST_LIMIT = 0.10, 0.25


@dataclass(frozen=True)
class Row:
    source: str
    label: str
    model: ModelShape
    training: TrainingConfig
    cluster: ClusterConfig
    layout: Layouts
    published_s: float


def _read(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _gpt(layers: int, hidden: int, heads: int, seq: int, vocab: int, ffn: int = 0
         ) -> ModelShape:
    return ModelShape(f"gpt-{hidden}x{layers}", layers, hidden, ffn or 4 * hidden, heads,
                      heads, vocab, seq, gated_mlp=False, tied_embeddings=True)


def _a100_cluster(gpus: int, nics: int) -> ClusterConfig:
    """Selene-like DGX A100: 8 GPUs, NVLink3, HDR InfiniBand (nics x 200 Gb/s per node)."""
    return ClusterConfig(gpu=gpu("A100 SXM 80GB"), gpus_per_node=8, nodes=max(gpus // 8, 1),
                         scale_up=fabric("NVLink3"), scale_out=fabric("InfiniBand HDR"),
                         nics_per_node=nics, nic_gbits_per_s=200.0)


# Megatron-LM 2021/2022 ran unfused attention, no comm overlap, fp32 main grads.
_MEGATRON_2021 = {"flash_attention": False, "overlap_grad_reduce": False,
                  "distributed_optimizer": False}


def korthikanti_rows() -> list[Row]:
    """Korthikanti 2022 Table 5: full recompute and selective+sequence-parallel times."""
    rows = []
    for r in _read("korthikanti2022_table5.csv"):
        m = _gpt(int(r["layers"]), int(r["hidden"]), int(r["heads"]), int(r["seq_len"]),
                 51200, int(r["ffn"]))
        lay = Layouts.of(int(r["TP"]), int(r["PP"]), int(r["DP"]), 1, int(r["microbatch"]),
                         int(r["pipeline_interleaving_calculon"]))
        cl = _a100_cluster(int(r["num_gpus"]), 8)
        modes: tuple[tuple[Recompute, str, bool], ...] = (
            ("full", "iter_time_full_recompute_s", False),
            ("selective", "iter_time_seqpar_plus_selective_s", True))
        for mode, col, sp in modes:
            tr = TrainingConfig(global_batch_seqs=int(r["global_batch_seqs"]), recompute=mode,
                                sequence_parallel=sp, **_MEGATRON_2021)  # type: ignore[arg-type]
            rows.append(Row("Korthikanti2022", f"{r['model']} {mode}", m, tr, cl, lay,
                            float(r[col])))
    return rows


def megatron2021_rows() -> list[Row]:
    """Narayanan 2021 Table 1 (weak scaling); TFLOP/s counted with eq. 3 incl. recompute."""
    rows = []
    for r in _read("megatron2021_table1_weak_scaling.csv"):
        m = _gpt(int(r["layers"]), int(r["hidden"]), int(r["attn_heads_recalled"]),
                 int(r["seq_len"]), int(r["vocab"]))
        n = int(r["num_gpus"])
        batch = int(r["global_batch_seqs"])
        published = narayanan_flops_per_iteration(m, batch, recompute=True) / (
            float(r["achieved_TFLOPs_per_GPU"]) * 1e12 * n)
        lay = Layouts.of(int(r["TP_derived"]), int(r["PP_derived"]), int(r["DP_derived"]), 1, 1)
        tr = TrainingConfig(global_batch_seqs=batch, recompute="full", sequence_parallel=False,
                            **_MEGATRON_2021)  # type: ignore[arg-type]
        rows.append(Row("Megatron2021", f"{r['params_B']}B n={n}", m, tr,
                        _a100_cluster(n, 8), lay, published))
    return rows


def megatron_core_rows() -> list[Row]:
    """Megatron-Core 2024 H100 weak scaling; TFLOP/s with the 72*B*s*l*h^2 formula
    (no recompute, non-causal). Cluster assumed DGX H100 with 8x NDR400 (Eos)."""
    rows = []
    for r in _read("megatron_core_2024_h100_weak_scaling.csv"):
        m = _gpt(int(r["layers"]), int(r["hidden"]), int(r["attn_heads"]), int(r["seq_len"]),
                 int(r["vocab"]))
        m = ModelShape(**{**m.__dict__, "tied_embeddings": False})
        n = int(r["num_gpus"])
        batch = int(r["global_batch_seqs"])
        published = narayanan_flops_per_iteration(m, batch, recompute=False) / (
            float(r["TFLOPs_per_GPU"]) * 1e12 * n)
        lay = Layouts.of(int(r["TP"]), int(r["PP"]), int(r["DP"]), 1, 1)
        tr = TrainingConfig(global_batch_seqs=batch, recompute="none", tp_comm_overlap=True)
        cl = ClusterConfig(gpu=gpu("H100 SXM 80GB"), gpus_per_node=8, nodes=n // 8,
                           scale_up=fabric("NVLink4"), scale_out=fabric("InfiniBand NDR"),
                           nics_per_node=8, nic_gbits_per_s=400.0)
        rows.append(Row("MegatronCore2024", f"{r['model']} n={n}", m, tr, cl, lay, published))
    return rows


def megatron2021_table2_rows() -> list[Row]:
    """Narayanan 2021 Table 2: PTD (Megatron) vs ZeRO-3 without model parallelism (DeepSpeed),
    175B / 530B GPT on Selene. Per-GPU TFLOP/s counted with eq. 3 incl. recompute, so the
    published time is that FLOP count / (TFLOP/s * GPUs). ZeRO-3 shards weights, grads and
    optimizer over all GPUs, gathers weights every micro-batch (fp16 gathers and reductions,
    grad_bytes 2) and overlaps that traffic with compute (DeepSpeed prefetch); both schemes
    use full activation recompute. Shapes: 175B 96x12288/96 heads, 530B 105x20480/128."""
    shapes = {"174.6": (96, 12288, 96), "529.6": (105, 20480, 128)}
    rows = []
    for r in _read("megatron2021_table2_ptd_vs_zero3.csv"):
        layers, hidden, heads = shapes[r["params_B"]]
        m = _gpt(layers, hidden, heads, int(r["seq_len"]), 51200)
        n, batch = int(r["num_gpus"]), int(r["global_batch_seqs"])
        published = narayanan_flops_per_iteration(m, batch, recompute=True) / (
            float(r["achieved_TFLOPs_per_GPU"]) * 1e12 * n)
        tp, pp = int(r["TP"]), int(r["PP"])
        zero = r["scheme"].startswith("ZeRO")
        lay = Layouts.of(tp, pp, n // (tp * pp), 1, int(r["microbatch"]))
        if zero:
            tr = TrainingConfig(global_batch_seqs=batch, recompute="full", zero_stage=3,
                                grad_bytes=2, sequence_parallel=False, flash_attention=False)
        else:
            tr = TrainingConfig(global_batch_seqs=batch, recompute="full",
                                sequence_parallel=False, **_MEGATRON_2021)  # type: ignore[arg-type]
        label = f"{r['params_B']}B {'ZeRO-3' if zero else 'PTD'} n={n}"
        rows.append(Row("Megatron2021-T2", label, m, tr, _a100_cluster(n, 8), lay, published))
    return rows


def vtrain_rows() -> list[Row]:
    """vTrain multi-node ground truth (A100, 8 GPUs/node, 800 Gb/s per node = 4x HDR,
    full recompute; measured with Megatron-DeepSpeed per the vTrain repo data/README.md).
    TP=16 rows span two nodes and are evaluated as such (two-level TP all-reduce)."""
    rows = []
    for r in _read("vtrain_ground_truth_multi.csv"):
        m = _gpt(int(r["# layers"]), int(r["hidden size"]), int(r["attention heads"]),
                 int(r["sequence length"]), 51200)
        n = int(r["# GPUs"])
        lay = Layouts.of(int(r["tensor parallelism"]), int(r["pipeline parallelism"]),
                         int(r["data parallelism"]), 1, int(r["micro batch"]))
        tr = TrainingConfig(global_batch_seqs=int(r["global batch"]), recompute="full",
                            sequence_parallel=False, **_MEGATRON_2021)  # type: ignore[arg-type]
        rows.append(Row("vTrain", f"{r['Parameters (billion)']}B t{r['tensor parallelism']}"
                        f"p{r['pipeline parallelism']}d{r['data parallelism']}"
                        f"b{r['micro batch']}", m, tr, _a100_cluster(n, 4), lay,
                        float(r["iteration time (ms)"]) / 1e3))
    return rows


# --- Internal consistency of the vTrain measurements ------------------------------------
# Rows of one model on one cluster share global batch B, so every layout does the same FLOPs
# per GPU. Under 1F1B a step is (m + p - 1) * u + C: m = B/(d*b) micro-batches, u the
# slowest stage's time per micro-batch, C the per-step DP all-reduce and optimizer (the same
# for every micro-batch size of one layout). Three bounds follow from the published numbers
# alone; a row breaking one by more than CONSISTENCY_TOL is inconsistent with its neighbours
# and is excluded from scoring (it is still printed, marked with the reason).
CONSISTENCY_TOL = 0.10


def _key(row: Row) -> tuple[str, int, int, int, int]:
    lay = row.layout
    return (row.model.name, int(lay.tp[0]), int(lay.pp[0]), int(lay.dp[0]),
            int(lay.microbatch[0]))


def _micro(row: Row) -> float:
    return row.training.global_batch_seqs / (int(row.layout.dp[0]) * int(row.layout.microbatch[0]))


def inconsistent_rows(rows: list[Row]) -> dict[tuple[str, int, int, int, int], str]:
    """Rows that break a bound implied by other rows of the same dataset (see above).

    (1) Bigger micro-batch at a fixed layout: u grows at most in proportion to its tokens
        (same kernels, longer M; a GEMM is never slower per FLOP on more rows), so
        T(b') <= T(b) * max(1, (m'+p-1)*b' / ((m+p-1)*b)).
    (2) TP/PP exchange at fixed d and b: layout (t, 2p) runs half the layers per stage at
        half the TP width of (2t, p): the same FLOPs per GPU per micro-batch, wider GEMMs
        and less TP traffic; only the bubble grows, so
        T(t, 2p) <= T(2t, p) * (m + 2p - 1) / (m + p - 1).
    (3) Smaller micro-batch at pp = 1: with the affine per-micro-batch cost T = m*o + K
        fitted to the next two larger micro-batches, T(b) <= m*o + K.
    """
    by_key = {_key(r): r for r in rows}
    out: dict[tuple[str, int, int, int, int], str] = {}
    groups: dict[tuple[str, int, int, int], list[Row]] = {}
    for r in rows:
        groups.setdefault(_key(r)[:4], []).append(r)
    for (name, t, p, d), grp in groups.items():
        grp = sorted({_key(r): r for r in grp}.values(), key=lambda r: _key(r)[4])
        for a, c in itertools.pairwise(grp):
            ba, bc = _key(a)[4], _key(c)[4]
            ratio = (_micro(c) + p - 1) * bc / ((_micro(a) + p - 1) * ba)
            bound = a.published_s * max(1.0, ratio)
            if c.published_s > bound * (1 + CONSISTENCY_TOL):
                out[_key(c)] = (f"b{bc} {c.published_s:.2f}s > {bound:.2f}s bound from "
                                f"b{ba} (same work, fewer micro-batches)")
        if p == 1:  # (3), from two larger micro-batches that pass (1) and fall in time
            for a, b_, c in zip(grp, grp[1:], grp[2:], strict=False):
                o = (b_.published_s - c.published_s) / (_micro(b_) - _micro(c))
                if o <= 0 or _key(b_) in out or _key(c) in out:
                    continue
                k = b_.published_s - _micro(b_) * o
                pred = _micro(a) * o + k
                if a.published_s > pred * (1 + CONSISTENCY_TOL):
                    out[_key(a)] = (f"b{_key(a)[4]} {a.published_s:.2f}s > {pred:.2f}s "
                                    f"from the per-micro-batch cost of b{_key(b_)[4]},"
                                    f"b{_key(c)[4]}")
        for r in grp:
            twin = by_key.get((name, 2 * t, p // 2, d, _key(r)[4])) if p % 2 == 0 else None
            if twin is None:
                continue
            m = _micro(r)
            bound = twin.published_s * (m + p - 1) / (m + p // 2 - 1)
            if r.published_s > bound * (1 + CONSISTENCY_TOL):
                out[_key(r)] = (f"t{t}p{p} {r.published_s:.2f}s > {bound:.2f}s bound from "
                                f"t{2 * t}p{p // 2} (same FLOPs, less TP traffic)")
    return out


def predict(row: Row) -> float:
    res = evaluate_layouts(row.model, row.training, row.cluster, row.layout)
    assert bool(res.valid[0]), row.label
    return float(res.step_time_s[0])


ALL_ROWS = (korthikanti_rows() + megatron2021_rows() + megatron2021_table2_rows()
            + megatron_core_rows() + vtrain_rows())
EXCLUDED = inconsistent_rows([r for r in ALL_ROWS if r.source == "vTrain"])


def exclusion(row: Row) -> str:
    """Why a row is not scored ('' when it is)."""
    return EXCLUDED.get(_key(row), "") if row.source == "vTrain" else ""


def comparison_table() -> tuple[str, dict[str, list[float]]]:
    lines = [f"{'source':17} {'row':34} {'pub s':>8} {'pred s':>8} {'err %':>7} "
             f"{'MFU pub':>7} {'MFU pred':>8}"]
    errors: dict[str, list[float]] = {}
    for row in ALL_ROWS:
        pred = predict(row)
        err = pred / row.published_s - 1.0
        tokens = row.training.global_batch_seqs * row.model.seq_len
        peak = row.cluster.gpu.peak_bf16_tflops * 1e12 * row.cluster.num_gpus
        mfu = [model_flops_per_token(row.model) * tokens / t / peak
               for t in (row.published_s, pred)]
        why = exclusion(row)
        lines.append(f"{row.source:17} {row.label:34} {row.published_s:8.3f} {pred:8.3f} "
                     f"{100 * err:+7.1f} {100 * mfu[0]:6.1f}% {100 * mfu[1]:7.1f}%"
                     + (f"  excluded: {why}" if why else ""))
        if not why:
            errors.setdefault(row.source, []).append(abs(err))
    everything = [e for v in errors.values() for e in v]
    for src, errs in [*errors.items(), ("ALL", everything)]:
        lines.append(f"{src:17} n={len(errs):3d} median |err| {100 * statistics.median(errs):5.1f}%"
                     f"  worst {100 * max(errs):5.1f}%")
    lines.append(f"excluded as internally inconsistent: {len(EXCLUDED)} vTrain rows")
    return "\n".join(lines), errors


def test_validation_table_within_targets() -> None:
    """Median <= 10% and worst row <= 25% for every source (run with -s for the table).

    vTrain rows that break a bound implied by other rows of the same dataset
    (inconsistent_rows) are printed as excluded, not scored.
    """
    table, errors = comparison_table()
    print("\n" + table)
    for src, errs in errors.items():
        assert statistics.median(errs) <= MEDIAN_LIMIT, f"{src} median error too high"
        assert max(errs) <= WORST_LIMIT, f"{src} worst row too far off"


def test_consistency_criteria_flag_the_documented_jumps() -> None:
    """The criteria catch the jumps visible by eye in the published numbers: 3.6B TP8 takes
    4.97 s at micro-batch 32 but 9.84 s at 64 (same work, one micro-batch fewer), and 39.1B
    t2p8d32b2 takes 21.9 s against 13.9 s for t4p4d32b2 (same FLOPs per GPU, less TP
    traffic; the bubble ratio (24+7)/(24+3) allows at most 15.9 s)."""
    flagged = {(k[1], k[2], k[3], k[4]) for k in EXCLUDED}
    assert (8, 1, 8, 64) in flagged
    assert (2, 8, 32, 2) in flagged
    assert (8, 1, 8, 32) not in flagged
    assert (4, 4, 32, 2) not in flagged
    assert len(EXCLUDED) <= 10  # a handful of 103 rows, not a cull


if __name__ == "__main__":
    print(comparison_table()[0])
