"""Planner request and response bodies (the API and the page share them)."""

from datetime import date
from typing import Literal

from fastapi.openapi.models import Example
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from app.hardware.catalog import load_fabrics, load_gpus, short_name
from app.modelling.throughput import PRESETS

PaymentKey = Literal["buy", "colo", "aws_on_demand", "aws_reserved_1y", "aws_reserved_3y",
                     "aws_savings_plan_1y", "aws_savings_plan_3y", "aws_capacity_block",
                     "aws_spot", "gpu_cloud", "gpu_cloud_committed", "gpu_cloud_spot"]
ALL_PAYMENTS: tuple[PaymentKey, ...] = ("buy", "colo", "aws_on_demand", "aws_reserved_1y",
                                        "aws_reserved_3y", "aws_savings_plan_1y",
                                        "aws_savings_plan_3y", "aws_capacity_block",
                                        "aws_spot", "gpu_cloud", "gpu_cloud_committed",
                                        "gpu_cloud_spot")
SCALE_OUT_KINDS = {"infiniband", "roce", "ethernet"}  # a buyer can build these itself

# Seed 001, "Case Study": 90B parameters, 48-hour window, $500K/month, 256 H100 (32 nodes),
# NDR400, batch 4M tokens (2048 x 2048), FP8. The article gives no token count: we infer one
# from its own claims, 41 h at 45.2% MFU on 256 H100 (989 TFLOP/s dense bf16):
# 0.452 x 989e12 x 256 x 41 x 3600 / (6 x 90e9 FLOP/token) = 31.3e9 tokens -> 31B. The
# planner then computes the time instead of copying the 41 h.
SEED_CASE_TOKENS = 31e9


def gpu_keys() -> dict[str, str]:
    """Short GPU names (as the pricing store spells them: "H100") -> catalog names."""
    return {short_name(name): name for name in load_gpus()}


def scale_out_fabrics() -> list[str]:
    return [n for n, f in load_fabrics().items() if f.kind in SCALE_OUT_KINDS]


class ShapeInput(BaseModel):
    """A dense decoder shape when no preset fits."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field("custom", min_length=1, max_length=40)
    layers: int = Field(ge=1, le=512)
    hidden: int = Field(ge=64, le=65536)
    ffn: int = Field(ge=64, le=262144)
    heads: int = Field(ge=1, le=1024)
    kv_heads: int = Field(ge=1, le=1024)
    vocab: int = Field(ge=1, le=1_000_000)
    seq_len: int = Field(ge=128, le=1_048_576)
    gated_mlp: bool = True


class PaymentOverride(BaseModel):
    """Replace (or supply, where the store has none) the price of one way of paying."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    payment: PaymentKey
    gpu: str = Field("H100", min_length=1, max_length=16)
    usd_per_gpu_hour: float | None = Field(None, ge=0, le=1000)
    upfront_usd_per_gpu: float | None = Field(None, ge=0, le=10_000_000)


# JSON-schema bounds of list items the validators below enforce (documented for API clients).
_NAME_ITEM: JsonDict = {"type": "string", "maxLength": 64}


def _items(schema: JsonDict) -> JsonDict:
    return {"items": schema}


class PlanRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str = Field("seed-90b", max_length=64,
                       description="Model preset; see `shape` for a custom one")
    shape: ShapeInput | None = None
    total_tokens: float = Field(SEED_CASE_TOKENS, ge=1e6, le=1e14)
    global_batch_seqs: int = Field(2048, ge=1, le=65536, description="Sequences per step")
    precision: Literal["bf16", "fp8"] = "fp8"
    deadline_hours: float = Field(48.0, ge=0.01, le=100_000)
    budget_usd: float | None = Field(None, ge=1, le=1e11, description="Total $ for one run")
    budget_usd_per_month: float | None = Field(500_000.0, ge=1, le=1e11)
    mode: Literal["single_run", "year_of_work"] = "year_of_work"
    utilization: float = Field(
        0.95, ge=0.01, le=1,
        description="Year of work: busy share of an owned/reserved cluster (seed 000: 95%); at "
                    "least 1% (below that a year of work needs astronomically many terms)")
    gpu_types: list[str] = Field(default_factory=lambda: ["H100", "H200"], min_length=1,
                                 max_length=7, json_schema_extra=_items(_NAME_ITEM))
    node_counts: list[int] = Field(
        default_factory=lambda: [8, 16, 32, 64, 128], min_length=1, max_length=32,
        json_schema_extra=_items({"type": "integer", "minimum": 1, "maximum": 2048}))
    fabrics: list[str] = Field(
        default_factory=lambda: ["InfiniBand NDR", "InfiniBand XDR", "RoCEv2 tuned",
                                 "RoCEv2 untuned", "Ethernet TCP 100G"],
        min_length=1, max_length=10, json_schema_extra=_items(_NAME_ITEM))
    oversubscription: list[float] = Field(
        default_factory=lambda: [1.0, 2.0], min_length=1, max_length=4,
        json_schema_extra=_items({"type": "number", "minimum": 1, "maximum": 8}))
    payments: list[PaymentKey] = Field(default_factory=lambda: list(ALL_PAYMENTS),
                                       min_length=1, max_length=len(ALL_PAYMENTS))
    owned_life_months: int = Field(36, ge=6, le=120, description="Depreciation life")
    resale_fraction: float = Field(0.0, ge=0, le=0.9,
                                   description="Resale value of GPUs and servers at end of life")
    maintenance_fraction_per_year: float = Field(0.0, ge=0, le=0.5,
                                                 description="Support as a share of capex/year")
    colo_usd_per_kw_month: float | None = Field(None, ge=0, le=10_000)
    switch_usd: dict[str, float] = Field(
        default_factory=dict, max_length=10,
        json_schema_extra={"additionalProperties": {"type": "number", "minimum": 0,
                                                    "maximum": 10_000_000}},
        description="Price of one 64-port switch per fabric, where the store has none")
    spot_interruption_per_node_hour: float | None = Field(None, ge=0, le=10)
    overrides: list[PaymentOverride] = Field(default_factory=list, max_length=32)
    region: str = Field("us-east-1", min_length=1, max_length=32)
    as_of: date | None = Field(None, description="Price date; default today (UTC)")
    max_options: int = Field(50, ge=1, le=1000, description="Rows of the ranked list returned")

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str) -> str:
        if v not in PRESETS:
            raise ValueError(f"unknown preset {v!r}; known: {', '.join(sorted(PRESETS))}")
        return v

    @field_validator("gpu_types")
    @classmethod
    def _known_gpus(cls, v: list[str]) -> list[str]:
        bad = [g for g in v if g not in gpu_keys()]
        if bad:
            raise ValueError(f"unknown GPU {bad}; known: {', '.join(sorted(gpu_keys()))}")
        return list(dict.fromkeys(v))

    @field_validator("fabrics")
    @classmethod
    def _known_fabrics(cls, v: list[str]) -> list[str]:
        known = scale_out_fabrics()
        bad = [f for f in v if f not in known]
        if bad:
            raise ValueError(f"unknown scale-out fabric {bad}; known: {', '.join(known)}")
        return list(dict.fromkeys(v))

    @field_validator("node_counts")
    @classmethod
    def _node_bounds(cls, v: list[int]) -> list[int]:
        if any(not 1 <= n <= 2048 for n in v):
            raise ValueError("node counts must be between 1 and 2048")
        return sorted(set(v))

    @field_validator("oversubscription")
    @classmethod
    def _over_bounds(cls, v: list[float]) -> list[float]:
        if any(not 1.0 <= x <= 8.0 for x in v):
            raise ValueError("oversubscription ratios must be between 1 and 8")
        return sorted(set(v))

    @field_validator("switch_usd")
    @classmethod
    def _switch_prices(cls, v: dict[str, float]) -> dict[str, float]:
        known = scale_out_fabrics()
        for name, price in v.items():
            if name not in known:
                raise ValueError(f"unknown scale-out fabric {name!r}")
            if not 0 <= price <= 10_000_000:
                raise ValueError(f"switch price for {name} must be between 0 and 10,000,000")
        return v



# Named request examples shown in the OpenAPI document; tests/test_openapi_examples.py posts
# every one and expects 2xx. One planner search takes about a second: keep the grids small.
# FastAPI drops null values from examples: a null (e.g. no monthly budget) cannot be shown.
PLAN_REQUEST_EXAMPLES: dict[str, Example] = {
    "seed_case_48h": {
        "summary": "A 90B model in 48 h within $500K a month (the seed case study)",
        "description": "31B tokens, fp8, H100 or H200, 16 to 64 nodes, every way of paying; "
                       "year of work at 95% utilization.",
        "value": {"model": "seed-90b", "total_tokens": 31e9, "global_batch_seqs": 2048,
                  "precision": "fp8", "deadline_hours": 48, "budget_usd_per_month": 500_000,
                  "mode": "year_of_work", "utilization": 0.95, "gpu_types": ["H100", "H200"],
                  "node_counts": [16, 32, 64], "fabrics": ["InfiniBand NDR", "RoCEv2 tuned"]},
    },
    "single_run_budget": {
        "summary": "Llama 3 70B, 2T tokens in 30 days, one run under $6M and $3M a month, "
                   "prices as of a date",
        "value": {"model": "llama3-70b", "total_tokens": 2e12, "global_batch_seqs": 1024,
                  "precision": "bf16", "deadline_hours": 720, "mode": "single_run",
                  "budget_usd": 6_000_000, "budget_usd_per_month": 3_000_000,
                  "gpu_types": ["H100", "H200", "B200"], "node_counts": [32, 64, 128],
                  "fabrics": ["InfiniBand NDR"],
                  "payments": ["aws_on_demand", "aws_capacity_block", "gpu_cloud",
                               "gpu_cloud_committed"],
                  "as_of": "2026-11-30", "max_options": 20},
    },
    "buy_with_own_prices": {
        "summary": "Buy or colocate vs a 1-year reservation, with your GPU quote and colo rate",
        "value": {"model": "seed-70b", "total_tokens": 1e12, "deadline_hours": 2000,
                  "mode": "year_of_work", "utilization": 0.9, "gpu_types": ["H100"],
                  "node_counts": [32, 64], "fabrics": ["InfiniBand NDR"],
                  "payments": ["buy", "colo", "aws_reserved_1y"],
                  "colo_usd_per_kw_month": 180, "owned_life_months": 48,
                  "resale_fraction": 0.2,
                  "overrides": [{"payment": "buy", "gpu": "H100",
                                 "upfront_usd_per_gpu": 24_000}]},
    },
}

class OptionOut(BaseModel):
    id: int = Field(description="Candidate index; GET /planner/option/{id} explains it")
    rank: int | None
    gpu: str
    nodes: int
    gpus: int
    fabric: str
    oversubscription: float
    payment: str
    payment_label: str
    layout: str
    wall_hours: float
    cost_usd: float
    usd_per_1b_tokens: float
    budget_usd: float | None
    monthly_spend_usd: float
    meets_deadline: bool
    within_budget: bool
    feasible: bool
    on_frontier: bool
    mfu: float
    useful_fraction: float


class OptionDetail(BaseModel):
    option: OptionOut
    step_seconds: dict[str, float]
    cost_usd: dict[str, float]
    terms: dict[str, float | str | bool | None]


class BreakEvenPriceOut(BaseModel):
    lever: str
    price_now: float
    price_break_even: float
    change_fraction: float
    achievable: bool
    sentence: str


class BreakEvenUtilizationOut(BaseModel):
    committed: OptionOut
    rented: OptionOut
    utilization: float
    sentence: str


class Explanation(BaseModel):
    winner: OptionDetail
    runner_up: OptionDetail | None
    why: list[str]
    runner_up_price: BreakEvenPriceOut | None
    owned_vs_rented: BreakEvenUtilizationOut | None


class InfeasibleOut(BaseModel):
    message: str
    fastest_within_budget: OptionOut | None
    cheapest_meeting_deadline: OptionOut | None
    deadline_needed_hours: float | None
    budget_needed_usd: float | None
    budget_needed_usd_per_month: float | None
    gpus_needed: int | None


class FabricValueOut(BaseModel):
    fabric: str
    wall_hours: float
    cost_usd: float
    hours_saved_per_run: float
    usd_saved_per_run: float
    lever: str
    price_now: float
    worth_up_to: float


class NetworkWhatIf(BaseModel):
    cluster: str
    payment: str
    baseline: str
    fabrics: list[FabricValueOut]
    sentence: str
    rules_of_thumb: list[str] = Field(
        default_factory=list, description="The seeds' network rules tested on this cluster")


class SeedCaseCheck(BaseModel):
    """Seed 001's case-study cluster (32 x 8 H100, NDR400) recomputed, next to its claims."""

    claimed_hours: float
    claimed_peak_fraction: float
    claimed_layout: str
    model_hours: float
    model_mfu: float
    model_layout: str
    claimed_layout_fits: bool
    claimed_layout_reason: str
    sentence: str


class PriceUsed(BaseModel):
    name: str
    amount: float
    unit: str
    source: str
    effective_from: date


class PlanResponse(BaseModel):
    request: PlanRequest
    as_of: date
    model: str
    total_params: float
    budget_rule: str
    candidates: int
    layouts_evaluated: int
    feasible_count: int
    options: list[OptionOut]
    frontier: list[OptionOut]
    explanation: Explanation | None
    infeasible: InfeasibleOut | None
    network: NetworkWhatIf | None
    seed_case: SeedCaseCheck | None = None
    notes: list[str]
    prices_used: list[PriceUsed]
