"""Load the hardware catalog (GPUs, fabrics) from CSV into the throughput model's dataclasses.

Not pure: reads files. The model in app.modelling.throughput never touches the filesystem.
Each row's `source` and `source_date` are kept beside the specs (`gpu_sources`,
`fabric_sources`) for the catalog API; the model's dataclasses do not carry them.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

from app.modelling.throughput.hardware import FabricSpec, GpuSpec

DATA_DIR = Path(__file__).resolve().parents[2] / "pricing_data" / "hardware"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _bool(text: str) -> bool:
    return text.strip().lower() in {"true", "1", "yes"}


@dataclass(frozen=True)
class Provenance:
    """Where one catalog row's figures come from, and the date they were taken."""

    source: str
    source_date: date


def _provenance(path: Path) -> dict[str, Provenance]:
    return {r["name"]: Provenance(source=r["source"],
                                  source_date=date.fromisoformat(r["source_date"]))
            for r in _rows(path)}


@cache
def gpu_sources(data_dir: Path = DATA_DIR) -> dict[str, Provenance]:
    """Each GPU's source and source date, keyed by name (same keys as `load_gpus`)."""
    return _provenance(data_dir / "gpus.csv")


@cache
def fabric_sources(data_dir: Path = DATA_DIR) -> dict[str, Provenance]:
    """Each fabric's source and source date, keyed by name (same keys as `load_fabrics`)."""
    return _provenance(data_dir / "fabrics.csv")


@cache
def load_gpus(data_dir: Path = DATA_DIR) -> dict[str, GpuSpec]:
    """All GPUs keyed by name."""
    out: dict[str, GpuSpec] = {}
    for r in _rows(data_dir / "gpus.csv"):
        out[r["name"]] = GpuSpec(
            name=r["name"], family=r["family"],
            peak_bf16_tflops=float(r["peak_bf16_tflops"]),
            peak_fp8_tflops=float(r["peak_fp8_tflops"]),
            hbm_gbytes=float(r["hbm_gbytes"]), hbm_tbytes_per_s=float(r["hbm_tbytes_per_s"]),
            power_w=float(r["power_w"]), scale_up=r["scale_up"],
            scale_up_gbytes_per_s=float(r["scale_up_gbytes_per_s"]),
            mamf_bf16_eff=float(r["mamf_bf16_eff"]),
        )
    return out


@cache
def load_fabrics(data_dir: Path = DATA_DIR) -> dict[str, FabricSpec]:
    """All fabrics (scale-up and scale-out) keyed by name."""
    out: dict[str, FabricSpec] = {}
    for r in _rows(data_dir / "fabrics.csv"):
        out[r["name"]] = FabricSpec(
            name=r["name"], kind=r["kind"], port_gbits_per_s=float(r["port_gbits_per_s"]),
            latency_us=float(r["latency_us"]), busbw_efficiency=float(r["busbw_efficiency"]),
            in_network_reduction=_bool(r["in_network_reduction"]), lossless=_bool(r["lossless"]),
            default_loss_rate=float(r["default_loss_rate"]),
        )
    return out


def short_name(gpu_name: str) -> str:
    """The GPU as the pricing store spells it: "H100 SXM 80GB" -> "H100"."""
    return gpu_name.split()[0]


def gpu(name: str) -> GpuSpec:
    """One GPU by exact name; KeyError lists the catalog."""
    gpus = load_gpus()
    if name not in gpus:
        raise KeyError(f"unknown GPU {name!r}; known: {sorted(gpus)}")
    return gpus[name]


def fabric(name: str) -> FabricSpec:
    """One fabric by exact name; KeyError lists the catalog."""
    fabs = load_fabrics()
    if name not in fabs:
        raise KeyError(f"unknown fabric {name!r}; known: {sorted(fabs)}")
    return fabs[name]
