"""Validate the throughput model against published training measurements.

One set of calibration constants (app/modelling/throughput/calibration.py + fabrics.csv)
predicts every row. Published per-GPU TFLOP/s are converted to iteration times with the
FLOP convention the source used (its own formula), so nothing depends on MFU conventions;
the table also shows MFU recomputed under the model's single convention for both sides.
Run with `pytest -s` to see the table.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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


def vtrain_rows() -> list[Row]:
    """vTrain multi-node ground truth (A100, 8 GPUs/node, 800 Gb/s per node = 4x HDR,
    full recompute). TP beyond one node is outside the model's layout space (the search
    never proposes it) and is reported but not scored."""
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


def predict(row: Row) -> float:
    res = evaluate_layouts(row.model, row.training, row.cluster, row.layout)
    assert bool(res.valid[0]), row.label
    return float(res.step_time_s[0])


def scored(row: Row) -> bool:
    return int(row.layout.tp[0]) <= row.cluster.gpus_per_node


ALL_ROWS = korthikanti_rows() + megatron2021_rows() + megatron_core_rows() + vtrain_rows()


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
        mark = "" if scored(row) else "  (not scored: TP > node)"
        lines.append(f"{row.source:17} {row.label:34} {row.published_s:8.3f} {pred:8.3f} "
                     f"{100 * err:+7.1f} {100 * mfu[0]:6.1f}% {100 * mfu[1]:7.1f}%{mark}")
        if scored(row):
            errors.setdefault(row.source, []).append(abs(err))
    everything = [e for v in errors.values() for e in v]
    for src, errs in [*errors.items(), ("ALL", everything)]:
        lines.append(f"{src:17} n={len(errs):3d} median |err| {100 * statistics.median(errs):5.1f}%"
                     f"  worst {100 * max(errs):5.1f}%")
    return "\n".join(lines), errors


def test_validation_table_within_targets() -> None:
    """Median <= 10% for every source; worst row <= 25% for the three curated tables.

    vTrain's 103 rows are raw cluster measurements with non-physical jumps (e.g. 3.6B TP8:
    4.97 s at micro-batch 32 but 9.84 s at 64; 39.1B TP2 rows 40% slower than TP4 at the
    same GPU count); vTrain's own simulator reports 14.7% MAPE on them. For vTrain we hold
    the 90th percentile to 25% and print the rows beyond it instead of fitting them.
    """
    table, errors = comparison_table()
    print("\n" + table)
    for src, errs in errors.items():
        assert statistics.median(errs) <= MEDIAN_LIMIT, f"{src} median error too high"
        if src == "vTrain":
            assert float(np.percentile(errs, 90)) <= WORST_LIMIT, "vTrain p90 too far off"
        else:
            assert max(errs) <= WORST_LIMIT, f"{src} worst row too far off"


if __name__ == "__main__":
    print(comparison_table()[0])
