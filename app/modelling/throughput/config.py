"""Inputs of the throughput model: training recipe, cluster, and arrays of layouts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from app.modelling.throughput.hardware import FabricSpec, GpuSpec

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

Recompute = Literal["none", "selective", "full"]
Precision = Literal["bf16", "fp8"]
Topology = Literal["fat_tree", "rail_optimized", "dragonfly_plus"]


@dataclass(frozen=True)
class TrainingConfig:
    """The training recipe. Bytes follow Megatron defaults: bf16 weights, fp32 main grads,
    fp32 Adam states (master, m, v) = 2 + 4 + 12 = 18 bytes/parameter unsharded."""

    global_batch_seqs: int
    total_tokens: float = 0.0
    precision: Precision = "bf16"
    recompute: Recompute = "selective"
    zero_stage: int = 0  # 0..3; 3 == FSDP full sharding
    distributed_optimizer: bool = True  # shard optimizer states over DP (== ZeRO-1)
    flash_attention: bool = True
    sequence_parallel: bool = True
    overlap_grad_reduce: bool = True
    tp_comm_overlap: bool = False
    grad_bytes: int = 4  # fp32 main grads (Megatron); 2 for bf16 reduction (FSDP)
    sample_bytes_per_token: float = 4.0  # int32 token ids from the data loader

    def __post_init__(self) -> None:
        if self.global_batch_seqs <= 0:
            raise ValueError("global batch must be positive")
        if not 0 <= self.zero_stage <= 3:
            raise ValueError(f"ZeRO stage must be 0..3, got {self.zero_stage}")


@dataclass(frozen=True)
class ClusterConfig:
    """Cluster hardware. A mixed-generation cluster lists extra GPUs in other_gpus; the job
    runs at the slowest one (synchronous training waits for the straggler)."""

    gpu: GpuSpec
    gpus_per_node: int
    nodes: int
    scale_up: FabricSpec
    scale_out: FabricSpec
    nics_per_node: int
    nic_gbits_per_s: float
    topology: Topology = "fat_tree"
    oversubscription: float = 1.0  # downlink:uplink at the leaf, 1 = non-blocking
    nodes_per_leaf: int = 16  # nodes under one leaf switch (32 ports down at 8 NICs/node...)
    packet_loss_rate: float | None = None  # None -> fabric default
    storage_gbytes_per_s: float = 100.0  # aggregate read bandwidth of the data store
    data_shares_network: bool = False
    other_gpus: tuple[GpuSpec, ...] = field(default_factory=tuple)
    # One degraded link anywhere in the job (None = healthy). Ring collectives move equal
    # shares over every link, so the slowest link paces each one and synchronous training
    # waits for it: a GPU pair whose NVLink fell back to PCIe, or one NIC port running slow.
    degraded_scale_up_gbytes_per_s: float | None = None  # per direction, that GPU pair
    degraded_nic_gbits_per_s: float | None = None  # that one NIC port

    def __post_init__(self) -> None:
        if self.gpus_per_node <= 0 or self.nodes <= 0:
            raise ValueError("cluster needs at least one node with at least one GPU")
        if self.oversubscription < 1.0:
            raise ValueError("oversubscription ratio must be >= 1")
        for name in ("degraded_scale_up_gbytes_per_s", "degraded_nic_gbits_per_s"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")

    @property
    def num_gpus(self) -> int:
        return self.gpus_per_node * self.nodes

    @property
    def node_bytes_per_s(self) -> float:
        return self.nics_per_node * self.nic_gbits_per_s * 1e9 / 8.0


@dataclass(frozen=True)
class Layouts:
    """N candidate layouts as parallel int arrays (all shape (N,)). interleave = virtual
    pipeline stages per GPU (Narayanan 2021 interleaved 1F1B)."""

    tp: IntArray
    pp: IntArray
    dp: IntArray
    cp: IntArray
    microbatch: IntArray
    interleave: IntArray

    @staticmethod
    def of(tp: int, pp: int, dp: int, cp: int = 1, microbatch: int = 1,
           interleave: int = 1) -> Layouts:
        """A single layout as size-1 arrays."""
        def a(x: int) -> IntArray:
            return np.array([x], dtype=np.int64)
        return Layouts(a(tp), a(pp), a(dp), a(cp), a(microbatch), a(interleave))

    def __len__(self) -> int:
        return int(self.tp.shape[0])
