"""The H200 measurements (../shared/calibration/h200_measured.json, copied to tests/data)
against the model: GEMM rates, decoder-block fwd+bwd times and the 1.36B training step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.hardware.catalog import fabric, gpu
from app.modelling.throughput import ClusterConfig, Layouts, ModelShape, TrainingConfig
from app.modelling.throughput.calibration import GPU_CALIBRATION
from app.modelling.throughput.step import evaluate_layouts

DATA: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "validation" / "h200_measured.json")
    .read_text())
H200 = ClusterConfig(gpu=gpu("H200 SXM 141GB"), gpus_per_node=1, nodes=1,
                     scale_up=fabric("NVLink4"), scale_out=fabric("InfiniBand NDR"),
                     nics_per_node=1, nic_gbits_per_s=400.0)


def test_gemm_rates_follow_the_overhead_model() -> None:
    c = GPU_CALIBRATION["hopper"]
    errs = []
    for g in DATA["gemm"]:
        flops = 2.0 * g["M"] * g["N"] * g["K"]
        pred = flops / (flops / (989e12 * c.matmul_eff) + c.gemm_overhead_s) / 1e12
        errs.append(abs(pred / g["bf16_TFLOPs"] - 1))
    assert sorted(errs)[len(errs) // 2] < 0.05
    assert max(errs) < 0.20


def _per_layer_s(block: dict[str, Any]) -> float:
    """Per-layer fwd+bwd from the difference of an L- and 2L-layer model (cancels logits)."""
    times = []
    for layers in (4, 8):
        m = ModelShape(block["name"], layers, block["hidden"], block["ffn"], block["heads"],
                       block["kv_heads"], 1024, block["seq"])
        tr = TrainingConfig(global_batch_seqs=block["micro_batch"], recompute="none")
        res = evaluate_layouts(m, tr, H200, Layouts.of(1, 1, 1, 1, block["micro_batch"]))
        times.append(float(res.compute_s[0]))
    return (times[1] - times[0]) / 4


@pytest.mark.parametrize("block", DATA["blocks"], ids=lambda b: b["name"])
def test_decoder_block_fwd_bwd_time(block: dict[str, Any]) -> None:
    pred = _per_layer_s(block)
    print(f"{block['name']}: predicted {pred * 1e3:.2f} ms vs measured "
          f"{block['s_per_layer_fwd_bwd'] * 1e3:.2f} ms")
    assert pred == pytest.approx(block["s_per_layer_fwd_bwd"], rel=0.10)


def test_small_model_training_step() -> None:
    """1.36B step, 8192 tokens: the file gives only the parameter count, so we use a
    GPT-style shape of that size (h=2048, 24 layers, ffn 5632 gated, vocab 50304 untied,
    ~1.44B) at seq 2048 x 4. Expect the same order: within 25% of 57.9k tokens/s."""
    m = ModelShape("1.4b", 24, 2048, 5632, 16, 16, 50304, 2048)
    tr = TrainingConfig(global_batch_seqs=4, recompute="none")
    res = evaluate_layouts(m, tr, H200, Layouts.of(1, 1, 1, 1, 4))
    measured = DATA["train_step"]["tokens_per_s"] * DATA["train_step"]["params"] / m.total_params
    pred = float(res.tokens_per_s[0])
    print(f"1.4B step: predicted {pred:.0f} tok/s vs {measured:.0f} (param-scaled measured)")
    assert pred == pytest.approx(measured, rel=0.25)
