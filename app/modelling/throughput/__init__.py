"""Throughput model: how fast a cluster trains a dense decoder, tied to its interconnect."""

from app.modelling.throughput.config import ClusterConfig, Layouts, TrainingConfig
from app.modelling.throughput.estimate import (
    Layout,
    LayoutError,
    MemoryBreakdown,
    StepBreakdown,
    TrainingEstimate,
    check_layout,
    estimate,
)
from app.modelling.throughput.failures import FailureConfig, Goodput, goodput
from app.modelling.throughput.hardware import FabricSpec, GpuSpec
from app.modelling.throughput.kvcache import KvCacheEstimate, kv_bytes_per_token, kv_cache
from app.modelling.throughput.layouts import (
    ScalingCurve,
    SearchResult,
    scaling_curve,
    search_layouts,
)
from app.modelling.throughput.model import PRESETS, ModelShape, preset
from app.modelling.throughput.step import StepArrays, evaluate_layouts

__all__ = [
    "PRESETS",
    "ClusterConfig",
    "FabricSpec",
    "FailureConfig",
    "Goodput",
    "GpuSpec",
    "KvCacheEstimate",
    "Layout",
    "LayoutError",
    "Layouts",
    "MemoryBreakdown",
    "ModelShape",
    "ScalingCurve",
    "SearchResult",
    "StepArrays",
    "StepBreakdown",
    "TrainingConfig",
    "TrainingEstimate",
    "check_layout",
    "estimate",
    "evaluate_layouts",
    "goodput",
    "kv_bytes_per_token",
    "kv_cache",
    "preset",
    "scaling_curve",
    "search_layouts",
]
