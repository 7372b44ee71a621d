"""Throughput request/response bodies. Every number is bounded; names carry units."""

from typing import Literal

from fastapi.openapi.models import Example
from pydantic import BaseModel, ConfigDict, Field, model_validator

Strict = ConfigDict(extra="forbid", allow_inf_nan=False)


class ModelInput(BaseModel):
    """A preset name, or a full dense-decoder shape (then every shape field is required).
    Shape fields without a preset make a custom model; no fields at all mean `llama3-70b`."""

    model_config = Strict

    preset: str | None = Field(None, max_length=32, examples=["llama3-70b"],
                               description="Default llama3-70b when no shape field is given")
    layers: int | None = Field(None, ge=1, le=512)
    hidden: int | None = Field(None, ge=64, le=65536)
    ffn: int | None = Field(None, ge=64, le=262144)
    heads: int | None = Field(None, ge=1, le=1024)
    kv_heads: int | None = Field(None, ge=1, le=1024)
    vocab: int | None = Field(None, ge=1, le=1_000_000)
    seq_len: int | None = Field(None, ge=16, le=2_097_152)

    @model_validator(mode="after")
    def _preset_or_shape(self) -> "ModelInput":
        shape = {name: getattr(self, name) for name in SHAPE_FIELDS}
        given = [name for name, v in shape.items() if v is not None]
        if self.preset is not None and given:
            # Before, a preset silently won over a shape sent with it.
            raise ValueError(f"give a preset or a shape, not both (preset {self.preset!r} "
                             f"with {', '.join(given)})")
        if self.preset is None and not given:
            self.preset = DEFAULT_PRESET
        elif self.preset is None and len(given) < len(shape):
            missing = [name for name in shape if name not in given]
            raise ValueError(f"a custom shape needs {', '.join(missing)} too (or give a preset)")
        return self


DEFAULT_PRESET = "llama3-70b"
SHAPE_FIELDS = ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len")


class LayoutInput(BaseModel):
    model_config = Strict

    tp: int = Field(1, ge=1, le=72)
    pp: int = Field(1, ge=1, le=512)
    dp: int = Field(1, ge=1, le=131072)
    cp: int = Field(1, ge=1, le=64)
    microbatch: int = Field(1, ge=1, le=256)
    interleave: int = Field(1, ge=1, le=16)


class ThroughputRequest(BaseModel):
    model_config = Strict

    model: ModelInput = Field(default_factory=lambda: ModelInput())
    gpu: str = Field("H100 SXM 80GB", max_length=64)
    gpus_per_node: int = Field(8, ge=1, le=72)
    nodes: int = Field(8, ge=1, le=4096)
    scale_up_fabric: str | None = Field(None, max_length=64,
                                        description="Default: the GPU's own NVLink/xGMI")
    scale_out_fabric: str = Field("InfiniBand NDR", max_length=64)
    nics_per_node: int = Field(8, ge=1, le=32)
    nic_gbps: float | None = Field(None, ge=1, le=3200,
                                   description="Per NIC port; default the fabric's port rate")
    topology: Literal["fat_tree", "rail_optimized", "dragonfly_plus"] = "fat_tree"
    oversubscription: float = Field(1.0, ge=1.0, le=16.0)
    packet_loss_rate: float | None = Field(None, ge=0.0, le=0.1)
    storage_gbytes_per_s: float = Field(100.0, ge=0.01, le=100_000)
    data_shares_network: bool = False
    degraded_scale_up_gbytes_per_s: float | None = Field(
        None, ge=0.1, le=10_000, description="One GPU pair's NVLink fallen back to this speed")
    degraded_nic_gbps: float | None = Field(
        None, ge=0.1, le=3200, description="One NIC port running at this speed")
    precision: Literal["bf16", "fp8"] = "bf16"
    recompute: Literal["none", "selective", "full"] = "selective"
    zero_stage: int = Field(1, ge=0, le=3)
    global_batch_seqs: int = Field(512, ge=1, le=1_000_000)
    total_tokens: float = Field(1e12, ge=1e6, le=1e15)
    layout: LayoutInput | None = Field(None, description="null = search every layout (auto)")
    # Lower bound > 0: the failure model divides by the rate (MTBF = 1 / rate).
    failures_per_gpu_hour: float | None = Field(None, ge=1e-9, le=1.0,
                                                description="Default: Llama 3 405B rate")
    checkpoint_write_gbytes_per_s: float = Field(50.0, ge=0.01, le=100_000)
    async_checkpoint: bool = True
    restart_s: float = Field(600.0, ge=0, le=86_400)
    scaling_fabrics: list[str] = Field(
        default_factory=lambda: ["InfiniBand NDR", "RoCEv2 tuned", "RoCEv2 untuned",
                                 "Ethernet TCP 100G"], max_length=6,
        json_schema_extra={"items": {"type": "string", "maxLength": 64}})
    # Item bounds enforced by _bounded_sweep; stated here for the JSON schema.
    scaling_nodes: list[int] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32, 64], max_length=12,
        json_schema_extra={"items": {"type": "integer", "minimum": 1, "maximum": 4096}})

    @model_validator(mode="after")
    def _bounded_sweep(self) -> "ThroughputRequest":
        if any(n < 1 or n > 4096 for n in self.scaling_nodes):
            raise ValueError("scaling_nodes must each be between 1 and 4096")
        return self


class StepBreakdownOut(BaseModel):
    compute_s: float
    tp_comm_exposed_s: float
    cp_comm_exposed_s: float
    pipeline_bubble_s: float
    pp_comm_s: float
    dp_comm_exposed_s: float
    optimizer_s: float
    data_stall_s: float
    step_time_s: float


class MemoryOut(BaseModel):
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    total_bytes: float
    usable_bytes: float


class GoodputOut(BaseModel):
    mtbf_s: float
    checkpoint_bytes: float
    checkpoint_write_s: float
    checkpoint_blocking_s: float
    interval_s: float
    useful_fraction: float


class ScalingSeries(BaseModel):
    fabric: str
    num_gpus: list[int]
    tokens_per_s: list[float]
    mfu: list[float]


class ThroughputResponse(BaseModel):
    model_name: str
    params: int
    num_gpus: int
    layout: LayoutInput
    fits: bool
    reason: str
    step: StepBreakdownOut
    memory: MemoryOut
    tokens_per_s: float
    tokens_per_day: float
    mfu: float = Field(description="Model FLOPs / (GPUs × dense bf16 peak); causal attention")
    hfu: float
    goodput: GoodputOut
    useful_tokens_per_day: float
    time_to_train_days: float | None
    layouts_evaluated: int
    notes: list[str]
    scaling: list[ScalingSeries]


class KvCacheRequest(BaseModel):
    model_config = Strict

    model: ModelInput = Field(default_factory=lambda: ModelInput(preset="llama2-7b"))
    context_tokens: int = Field(1_048_576, ge=1, le=16_777_216)
    batch: int = Field(1, ge=1, le=4096)
    gpu: str = Field("H200 SXM 141GB", max_length=64)
    bytes_per_element: float = Field(2.0, ge=0.5, le=4)


class KvCacheResponse(BaseModel):
    model_name: str
    kv_bytes_per_token: float
    kv_bytes: float
    weights_bytes: float
    gpus_needed: int
    tensor_parallel: int
    context_parallel: int


# Named request examples shown in the OpenAPI document; tests/test_openapi_examples.py posts
# every one and expects 2xx. GPU and fabric names: GET /api/v1/hardware/gpus and /fabrics.
THROUGHPUT_REQUEST_EXAMPLES: dict[str, Example] = {
    "llama3_70b_64_h100_ndr": {
        "summary": "Llama 3 70B on 64 H100 over InfiniBand NDR, 2T tokens",
        "description": "Every layout (TP x PP x DP x CP) is searched; the answer has the "
                       "fastest one that fits, and the scaling curve on four fabrics.",
        "value": {"model": {"preset": "llama3-70b"}, "gpu": "H100 SXM 80GB", "nodes": 8,
                  "scale_out_fabric": "InfiniBand NDR", "precision": "bf16",
                  "global_batch_seqs": 512, "total_tokens": 2e12},
    },
    "llama3_8b_fixed_layout": {
        "summary": "Llama 3 8B on 32 H200 over tuned RoCE, fp8, a fixed layout (pure DP)",
        "value": {"model": {"preset": "llama3-8b"}, "gpu": "H200 SXM 141GB", "nodes": 4,
                  "scale_out_fabric": "RoCEv2 tuned", "precision": "fp8",
                  "layout": {"tp": 1, "pp": 1, "dp": 32, "microbatch": 1},
                  "global_batch_seqs": 256, "total_tokens": 1.5e13,
                  "scaling_fabrics": ["RoCEv2 tuned", "InfiniBand NDR"],
                  "scaling_nodes": [1, 2, 4, 8, 16]},
    },
    "custom_shape": {
        "summary": "A custom 13B-class shape (no preset) on 32 H100 over InfiniBand NDR",
        "description": "Shape fields without a preset describe your own dense decoder; all "
                       "seven are required, and a preset sent with them is refused.",
        "value": {"model": {"layers": 40, "hidden": 5120, "ffn": 13824, "heads": 40,
                            "kv_heads": 40, "vocab": 32000, "seq_len": 4096},
                  "gpu": "H100 SXM 80GB", "nodes": 4, "scale_out_fabric": "InfiniBand NDR",
                  "total_tokens": 1e12},
    },
    "lossy_fabric": {
        "summary": "Llama 2 70B on 128 H100 over untuned RoCE losing 0.1% of packets",
        "value": {"model": {"preset": "llama2-70b"}, "gpu": "H100 SXM 80GB", "nodes": 16,
                  "scale_out_fabric": "RoCEv2 untuned", "packet_loss_rate": 0.001,
                  "oversubscription": 2.0, "scaling_fabrics": [], "scaling_nodes": []},
    },
}

KV_CACHE_REQUEST_EXAMPLES: dict[str, Example] = {
    "llama2_7b_1m_h200": {
        "summary": "Llama 2 7B with a 1M-token context on H200 (the defaults)",
        "value": {"model": {"preset": "llama2-7b"}, "context_tokens": 1_048_576, "batch": 1,
                  "gpu": "H200 SXM 141GB", "bytes_per_element": 2},
    },
    "llama3_70b_128k_fp8": {
        "summary": "Llama 3 70B, 8 sequences of 128K tokens, fp8 cache, on H100",
        "value": {"model": {"preset": "llama3-70b"}, "context_tokens": 131_072, "batch": 8,
                  "gpu": "H100 SXM 80GB", "bytes_per_element": 1},
    },
}
