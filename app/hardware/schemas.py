"""Hardware catalog API bodies: one GPU or fabric as the throughput model and the planner see
it, with the source and date of its figures. Names carry units; bandwidths are per direction."""

from datetime import date

from pydantic import BaseModel, Field


class GpuOut(BaseModel):
    name: str = Field(examples=["H100 SXM 80GB"])
    short_name: str = Field(description="The GPU as the pricing store and the planner spell "
                            "it (`gpu_model` of /tco and /prices, `gpu_types` of /plan)",
                            examples=["H100"])
    family: str = Field(description="Architecture family, e.g. hopper (selects the "
                        "calibration the throughput model applies)")
    peak_bf16_tflops: float = Field(description="Dense (no sparsity) bf16 peak, TFLOP/s")
    peak_fp8_tflops: float = Field(description="Dense fp8 peak, TFLOP/s; 0 when the GPU has "
                                   "no fp8 tensor cores")
    hbm_gbytes: float = Field(description="HBM capacity, GB (10^9 bytes)")
    hbm_tbytes_per_s: float = Field(description="HBM bandwidth, TB/s")
    power_w: float = Field(description="Board power (TDP), W")
    scale_up: str = Field(description="Name of the GPU's default scale-up fabric "
                          "(see /api/v1/hardware/fabrics)")
    scale_up_gbytes_per_s: float = Field(description="Scale-up bandwidth per GPU, one "
                                         "direction, GB/s")
    mamf_bf16_eff: float = Field(description="Measured maximum achievable bf16 matmul "
                                 "throughput / peak (fraction); 0 when unknown")
    source: str = Field(description="Where the figures come from (datasheet, measurement)")
    source_date: date = Field(description="Date of that source")


class FabricOut(BaseModel):
    name: str = Field(examples=["InfiniBand NDR"])
    kind: str = Field(description="nvlink | pcie | infiniband | roce | ethernet | efa")
    port_gbits_per_s: float = Field(description="Line rate per port (scale-out) or per GPU "
                                    "one direction (scale-up), Gbit/s")
    latency_us: float = Field(description="Per-step latency (alpha of the alpha-beta "
                              "collective model), µs")
    busbw_efficiency: float = Field(description="Fraction of line rate NCCL bus bandwidth "
                                    "reaches on large messages on a healthy fabric")
    in_network_reduction: bool = Field(description="SHARP / NVLS: all-reduce moves about half "
                                       "the bytes")
    lossless: bool = Field(description="Credit- or PFC-based flow control; lossy fabrics get "
                           "the packet-loss penalty")
    default_loss_rate: float = Field(description="Packet-loss probability assumed when the "
                                     "request gives none")
    source: str = Field(description="Where the figures come from (datasheet, measurement)")
    source_date: date = Field(description="Date of that source")


class GpuList(BaseModel):
    items: list[GpuOut]


class FabricList(BaseModel):
    items: list[FabricOut]
