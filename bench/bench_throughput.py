"""Throughput-model benchmark: layout-search speed and a per-fabric scaling table.

Run: python bench/bench_throughput.py   (prints figures; not a timed test)
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.hardware.catalog import fabric, gpu
from app.modelling.throughput import (
    ClusterConfig,
    TrainingConfig,
    estimate,
    preset,
    scaling_curve,
    search_layouts,
)


def main() -> None:
    m = preset("gpt3-175b")
    tr = TrainingConfig(global_batch_seqs=1536)
    cl = ClusterConfig(gpu=gpu("H100 SXM 80GB"), gpus_per_node=8, nodes=128,
                       scale_up=fabric("NVLink4"), scale_out=fabric("InfiniBand NDR"),
                       nics_per_node=8, nic_gbits_per_s=400.0)
    search_layouts(m, tr, cl)  # warm-up
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        res = search_layouts(m, tr, cl)
    dt = (time.perf_counter() - t) / reps
    print(f"175B on 1,024 H100: {res.evaluated} valid layouts in {dt * 1e3:.1f} ms "
          f"= {res.evaluated / dt:,.0f} layouts/s")
    best = estimate(m, tr, cl)
    print(f"  best {best.layout}: step {best.step.step_time_s:.2f} s, "
          f"MFU {100 * best.mfu:.1f}%, {best.tokens_per_day / 1e9:.1f} B tokens/day")

    m405 = preset("llama3-405b")
    tr405 = TrainingConfig(global_batch_seqs=2048)
    big = replace(cl, nodes=2048, scale_out=fabric("RoCEv2 tuned"))
    search_layouts(m405, tr405, big)
    t = time.perf_counter()
    for _ in range(reps):
        res405 = search_layouts(m405, tr405, big)
    dt = (time.perf_counter() - t) / reps
    print(f"Llama-3 405B on 16,384 H100: {res405.evaluated} valid layouts in {dt * 1e3:.1f} ms "
          f"= {res405.evaluated / dt:,.0f} layouts/s")
    best405 = estimate(m405, tr405, big)
    lay405 = best405.layout
    uneven = "uneven" if m405.layers % (lay405.pp * lay405.interleave) else "even"
    print(f"  best {lay405} ({uneven} stages of 126 layers): step "
          f"{best405.step.step_time_s:.2f} s, MFU {100 * best405.mfu:.1f}%")

    m70 = preset("llama3-70b")
    tr70 = TrainingConfig(global_batch_seqs=512)
    nodes = [1, 2, 4, 8, 16, 32, 64]
    print("\nLlama-3 70B, H100, tokens/s (best layout) vs GPUs, per scale-out fabric:")
    print(f"{'fabric':28}" + "".join(f"{8 * n:>9}" for n in nodes))
    for name, nics, gbits in (("InfiniBand NDR", 8, 400.0), ("RoCEv2 tuned", 8, 400.0),
                              ("RoCEv2 untuned", 8, 400.0), ("AWS EFA v2", 32, 100.0),
                              ("Ethernet TCP 100G", 1, 100.0)):
        c = replace(cl, scale_out=fabric(name), nics_per_node=nics, nic_gbits_per_s=gbits)
        t = time.perf_counter()
        curve = scaling_curve(m70, tr70, c, nodes)
        dt = time.perf_counter() - t
        label = f"{name} {nics}x{gbits:g}G"
        print(f"{label:28}" + "".join(f"{x:9.0f}" for x in curve.tokens_per_s)
              + f"   ({dt * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
