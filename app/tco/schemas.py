"""TCO request and response bodies (API and web form share them)."""

from datetime import date

from pydantic import BaseModel, ConfigDict, Field


class TcoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    nodes: int = Field(8, ge=1, le=4096, description="Nodes of `gpus_per_node` GPUs each")
    gpu_model: str = Field("H100", min_length=1, max_length=32, examples=["H100"])
    months: int = Field(24, ge=1, le=120, description="Horizon in months (730 h each)")
    utilization: float = Field(1.0, ge=0.0, le=1.0,
                               description="Fraction of wall-clock hours the cluster trains")
    region: str = Field("us-east-1", min_length=1, max_length=32)
    as_of: date | None = Field(None, description="Price date; default today (UTC)")


class PriceUsed(BaseModel):
    name: str
    amount: float
    unit: str
    source: str
    effective_from: date


class OptionResult(BaseModel):
    key: str
    label: str
    total_usd: float
    usd_per_gpu_hour_used: float | None = Field(
        description="Total divided by GPU-hours actually used; null at zero utilization")
    monthly_usd: list[float]
    cumulative_usd: list[float]


class TcoResponse(BaseModel):
    request: TcoRequest
    as_of: date
    gpus: int
    gpu_hours_used: float
    options: list[OptionResult]
    cheapest: str
    prices_used: list[PriceUsed]
    assumptions: dict[str, float]
