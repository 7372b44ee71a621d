"""Hardware descriptions the throughput model consumes (filled by app.hardware.catalog).

The model never reads files: the catalog loader turns pricing_data/hardware/*.csv into these
frozen dataclasses and passes them in. All bandwidths are per direction.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """One accelerator model; peak rates are dense (no sparsity), from the vendor datasheet."""

    name: str
    family: str  # key into calibration.GPU_CALIBRATION, e.g. "ampere", "hopper"
    peak_bf16_tflops: float
    peak_fp8_tflops: float  # 0 when the GPU has no fp8 tensor cores (A100)
    hbm_gbytes: float
    hbm_tbytes_per_s: float
    power_w: float
    scale_up: str  # name of the default scale-up fabric, e.g. "NVLink4"
    scale_up_gbytes_per_s: float  # per GPU, one direction
    mamf_bf16_eff: float  # measured max achievable matmul / peak (stas00 MAMF), 0 if unknown


@dataclass(frozen=True)
class FabricSpec:
    """A scale-up or scale-out fabric.

    busbw_efficiency is the fraction of line rate that NCCL bus bandwidth reaches on large
    messages on a healthy fabric; latency_us is the per-step alpha of the alpha-beta model.
    """

    name: str
    kind: str  # "nvlink" | "pcie" | "infiniband" | "roce" | "ethernet" | "efa"
    port_gbits_per_s: float  # per port (scale-out) or per GPU one direction (scale-up)
    latency_us: float
    busbw_efficiency: float
    in_network_reduction: bool  # SHARP / NVLS: all-reduce moves ~half the bytes
    lossless: bool  # PFC/credit-based; lossy fabrics get the packet-loss penalty
    default_loss_rate: float  # packet-loss probability assumed when the user gives none
