"""TCO request and response bodies (API and web form share them).

Every number is bounded; NaN and infinities are refused (`allow_inf_nan=False`). Prices default
from the pricing store as of `as_of`; anything under `prices` overrides the store (a
procurement tool posts its own quote). Non-price assumptions live under `assumptions`, each
with a documented default and source (app/tco/defaults.py).
"""

from datetime import date
from typing import Annotated, Literal

from fastapi.openapi.models import Example
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from app.tco.defaults import GPUS_PER_NODE, NICS_PER_NODE, SWITCH_RADIX

STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)
Usd = Annotated[float, Field(ge=0.0, le=1e9)]
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


class ConstantProfile(BaseModel):
    model_config = STRICT
    kind: Literal["constant"] = "constant"
    utilization: Fraction = 1.0


class ScheduleProfile(BaseModel):
    """The whole cluster (or `node_fraction` of it) for hours/day × days/week."""

    model_config = STRICT
    kind: Literal["schedule"] = "schedule"
    hours_per_day: float = Field(8.0, ge=0.0, le=24.0)
    days_per_week: float = Field(5.0, ge=0.0, le=7.0)
    node_fraction: Fraction = 1.0


class SeriesProfile(BaseModel):
    """Share of the nodes busy around the clock, month by month (length = `months`)."""

    model_config = STRICT
    kind: Literal["series"] = "series"
    monthly_utilization: list[Fraction] = Field(min_length=1, max_length=120)


OptionKey = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[a-z0-9_.-]+$")]
Profile = Annotated[ConstantProfile | ScheduleProfile | SeriesProfile,
                    Field(discriminator="kind")]


class ReservedQuote(BaseModel):
    model_config = STRICT
    term_months: Literal[12, 36]
    payment_option: Literal["no_upfront", "partial_upfront", "all_upfront"]
    usd_per_node_hour: Usd = Field(description="Recurring hourly charge per instance")
    upfront_usd_per_node: Usd = 0.0


class SavingsPlanQuote(BaseModel):
    model_config = STRICT
    term_months: Literal[12, 36]
    usd_per_node_hour: Usd


class GpuCloudQuote(BaseModel):
    model_config = STRICT
    provider: str = Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.-]+$")
    purchase_option: Literal["on_demand", "committed", "spot"] = "on_demand"
    term_months: int = Field(0, ge=0, le=60, validate_default=True,
                             description="Committed contracts: the term")
    usd_per_gpu_hour: Usd

    @field_validator("term_months")
    @classmethod
    def _committed_has_a_term(cls, v: int, info: ValidationInfo) -> int:
        if info.data.get("purchase_option") == "committed" and v < 1:
            raise ValueError("a committed contract needs term_months ≥ 1")
        return v


class PriceOverrides(BaseModel):
    """Explicit prices; each replaces the store's figure (units in the names)."""

    model_config = STRICT
    gpu_usd_each: Usd | None = None
    server_usd_per_node: Usd | None = None
    server_busy_kw: float | None = Field(None, ge=0.1, le=200.0)
    ib_switch_usd_each: Usd | None = None
    ib_switch_kw_each: float | None = Field(None, ge=0.0, le=50.0)
    eth_switch_usd_each: Usd | None = None
    nic_usd_each: Usd | None = None
    cable_usd_each: Usd | None = None
    transceiver_usd_each: Usd | None = None
    node_network_kit_usd_per_node: Usd | None = None
    rack_usd_each: Usd | None = None
    storage_usd: Usd | None = None
    idle_power_fraction: Fraction | None = None
    pue: float | None = Field(None, ge=1.0, le=3.0)
    electricity_usd_per_kwh: float | None = Field(None, ge=0.0, le=5.0)
    staff_usd_per_fte_year: Usd | None = None
    colo_usd_per_kw_month: float | None = Field(None, ge=0.0, le=10_000.0)
    aws_on_demand_usd_per_node_hour: Usd | None = None
    aws_spot_usd_per_node_hour: Usd | None = None
    aws_capacity_block_usd_per_node_hour: Usd | None = None
    aws_reserved: list[ReservedQuote] | None = Field(None, max_length=6)
    aws_savings_plans: list[SavingsPlanQuote] | None = Field(None, max_length=4)
    gpu_clouds: list[GpuCloudQuote] | None = Field(None, max_length=10)


class Assumptions(BaseModel):
    """Non-price inputs. Defaults and their sources: app/tco/defaults.py."""

    model_config = STRICT
    gpus_per_node: int = Field(GPUS_PER_NODE, ge=1, le=16)
    fabric: Literal["infiniband", "ethernet"] = "infiniband"
    nics_per_node: int = Field(NICS_PER_NODE, ge=0, le=16)
    switch_radix: int = Field(SWITCH_RADIX, ge=8, le=256)
    oversubscription: float = Field(1.0, ge=1.0, le=8.0)
    transceivers_per_link: int = Field(2, ge=0, le=2)
    frontend_ports_per_node: int = Field(2, ge=0, le=8)
    nodes_per_rack: int = Field(4, ge=1, le=16)
    installation_fraction: float = Field(0.03, ge=0.0, le=1.0)
    spares_fraction: float = Field(0.02, ge=0.0, le=1.0)
    support_fraction_per_year: float = Field(0.08, ge=0.0, le=1.0)
    nodes_per_fte: float = Field(64.0, ge=1.0, le=10_000.0)
    staff_fte: float | None = Field(None, gt=0.0, le=1_000.0,
                                    description="Fixed operations headcount; default derived "
                                    "from nodes_per_fte")
    resale_decline_per_year: Fraction = 0.30
    depreciation_months: int = Field(60, ge=1, le=240)
    discount_rate_annual: float = Field(0.08, ge=0.0, le=1.0)
    goodput_fraction: float = Field(1.0, gt=0.0, le=1.0)
    colo_contracted_headroom: float = Field(0.10, ge=0.0, le=2.0)
    colo_power_metered: bool = True
    spot_interruptions_per_hour: float = Field(0.2, ge=0.0, le=10.0)
    spot_checkpoint_interval_hours: float = Field(1.0, gt=0.0, le=48.0)
    spot_restart_hours: float = Field(1 / 3, ge=0.0, le=48.0)
    cloud_storage_tb: float = Field(0.0, ge=0.0, le=1e6)
    cloud_storage_usd_per_tb_month: float = Field(23.0, ge=0.0, le=10_000.0)
    egress_tb_per_month: float = Field(0.0, ge=0.0, le=1e6)
    egress_usd_per_tb: float = Field(90.0, ge=0.0, le=10_000.0)
    cloud_extras_usd_per_month: Usd = 0.0
    managed_overhead_fraction: float = Field(0.0, ge=0.0, le=1.0)
    sensitivity_swing: float = Field(0.2, gt=0.0, le=0.9)
    monte_carlo_draws: int = Field(1000, ge=0, le=20_000)
    monte_carlo_seed: int = Field(0, ge=0, le=2**31 - 1)


class TcoRequest(BaseModel):
    model_config = STRICT

    nodes: int = Field(8, ge=1, le=4096, description="Nodes of `gpus_per_node` GPUs each")
    gpu_model: str = Field("H100", min_length=1, max_length=32, examples=["H100"])
    months: int = Field(24, ge=1, le=120, description="Horizon in months (730 h each)")
    utilization: Fraction = Field(1.0, description="Constant share of GPU-hours used, read as "
                                  "that share of the nodes busy around the clock (many jobs); "
                                  "use a schedule profile for the whole cluster part-time. "
                                  "Ignored when `profile` is given")
    profile: Profile | None = None
    region: str = Field("us-east-1", min_length=1, max_length=32)
    as_of: date | None = Field(None, description="Price date; default today (UTC)")
    prices: PriceOverrides = Field(default_factory=PriceOverrides)
    assumptions: Assumptions = Field(default_factory=Assumptions)
    break_even_pairs: list[tuple[OptionKey, OptionKey]] | None = Field(
        None, max_length=50, description="Option key pairs to solve break-even for (mixed "
        "strategies excluded); default: each bought option against each rented one, and each "
        "commitment against on-demand")

    @field_validator("profile")
    @classmethod
    def _series_matches_horizon(cls, v: Profile | None, info: ValidationInfo) -> Profile | None:
        months = info.data.get("months")
        if isinstance(v, SeriesProfile) and months is not None \
                and len(v.monthly_utilization) != months:
            raise ValueError(f"monthly_utilization has {len(v.monthly_utilization)} values; "
                             f"months is {months}")
        return v


class PriceUsed(BaseModel):
    name: str
    amount: float
    unit: str
    source: str
    effective_from: date | None


class OptionResult(BaseModel):
    key: str
    label: str
    family: Literal["own", "cloud", "gpu_cloud", "mixed"]
    total_usd: float = Field(description="Undiscounted sum of the monthly flows")
    npv_usd: float = Field(description="Present value at the discount rate (money.py)")
    usd_per_gpu_hour_used: float | None = Field(
        description="Total divided by GPU-hours actually used; null at zero utilization")
    usd_per_useful_gpu_hour: float | None = Field(
        description="Per used GPU-hour divided by the goodput fraction")
    monthly_usd: list[float]
    cumulative_usd: list[float]
    baseline_nodes: int | None = Field(None, description="Mixed: the cost-minimising baseline")
    capex_usd: dict[str, float] | None = None
    depreciation_usd_per_month: list[float] | None = None
    notes: list[str] = []


class OmittedOption(BaseModel):
    key: str
    label: str
    missing: list[str]


class BreakEven(BaseModel):
    first: str
    second: str
    utilization: float | None = Field(description="Constant utilization where the two PVs are "
                                      "equal; null when one is cheaper at every utilization")
    first_cheaper_above: bool
    payback_month: int | None = Field(description="First month from which `first` stays "
                                      "cumulatively cheaper; null if never within the horizon")


class TornadoEntry(BaseModel):
    input: str
    base_value: float
    low_value: float
    high_value: float
    difference_at_low_usd: float
    difference_at_high_usd: float
    swing_usd: float


class Sensitivity(BaseModel):
    buy: str
    rent: str
    basis: str = "PV(buy) − PV(rent) at the discount rate; negative means buying is cheaper"
    base_difference_usd: float
    rows: list[TornadoEntry]


class MonteCarloResult(BaseModel):
    draws: int
    seed: int
    buy_npv_usd_p10_p50_p90: tuple[float, float, float]
    rent_npv_usd_p10_p50_p90: tuple[float, float, float]
    difference_usd_p10_p50_p90: tuple[float, float, float]
    probability_buy_cheaper: float


class TcoResponse(BaseModel):
    request: TcoRequest
    as_of: date
    gpus: int
    months: int
    mean_utilization: float
    gpu_hours_used: float
    options: list[OptionResult]
    omitted: list[OmittedOption]
    cheapest: str
    cheapest_npv: str
    break_even: list[BreakEven]
    sensitivity: Sensitivity | None
    monte_carlo: MonteCarloResult | None
    prices_used: list[PriceUsed]
    network: dict[str, float]
    assumptions: dict[str, float]
    notes: list[str]


class ExampleSummary(BaseModel):
    name: str
    title: str
    source: str = Field(description="Seed article file the example comes from")
    notes: list[str]


class ClaimResult(BaseModel):
    what: str
    article_usd: float
    option: str
    measure: Literal["total", "monthly_average"]
    computed_usd: float | None = Field(description="What follows from the inputs; null when "
                                       "the option could not be priced")


class ExampleResult(ExampleSummary):
    claims: list[ClaimResult]
    result: TcoResponse


class TcoSweepRequest(BaseModel):
    """One cluster and its prices (`tco`; its utilization and months are ignored) over a grid
    of constant utilizations × horizons."""

    model_config = STRICT
    tco: TcoRequest = Field(default_factory=TcoRequest)
    utilizations: list[Fraction] = Field(
        default_factory=lambda: [i / 20 for i in range(21)], min_length=1, max_length=101)
    horizons_months: list[Annotated[int, Field(ge=1, le=120)]] = Field(
        default_factory=lambda: [6, 12, 18, 24, 36, 48, 60], min_length=1, max_length=120)


class TcoSweepResponse(BaseModel):
    as_of: date
    options: list[str]
    labels: list[str]
    utilizations: list[float]
    horizons_months: list[int]
    npv_usd: list[list[list[float]]] = Field(description="[option][utilization][horizon]")
    cheapest: list[list[str]] = Field(description="[utilization][horizon] → option key")
    omitted: list[OmittedOption]


# Named request examples shown in the OpenAPI document (POST /api/v1/tco and /tco/sweep);
# tests/test_openapi_examples.py posts every one and expects 2xx.
TCO_REQUEST_EXAMPLES: dict[str, Example] = {
    "h100_3_years_80_percent": {
        "summary": "8 H100 nodes for 3 years at 80%",
        "description": "64 H100 GPUs, 80% of GPU-hours used (many jobs sharing the cluster), "
                       "priced with the store's prices in force today.",
        "value": {"nodes": 8, "gpu_model": "H100", "months": 36, "utilization": 0.8,
                  "region": "us-east-1"},
    },
    "schedule_8h_5d": {
        "summary": "A schedule profile: 8 h x 5 days",
        "description": "The whole cluster busy 8 hours a day, 5 days a week (40 of 168 hours, "
                       "24%); renting pays only for those hours.",
        "value": {"nodes": 8, "gpu_model": "H100", "months": 36,
                  "profile": {"kind": "schedule", "hours_per_day": 8, "days_per_week": 5,
                              "node_fraction": 1.0}},
    },
    "ramp_up_series": {
        "summary": "A ramp-up: 4 nodes, utilization month by month for a year",
        "value": {"nodes": 4, "gpu_model": "H100", "months": 12,
                  "profile": {"kind": "series", "monthly_utilization": [
                      0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9]}},
    },
    "own_quotes_as_of": {
        "summary": "Your own quotes over the store's, prices as of a date",
        "description": "`prices` replaces the store's figures (a GPU quote, power, a GPU "
                       "cloud's 1-year contract); everything else comes from the store as of "
                       "`as_of`, so the answer stays the same later.",
        "value": {"nodes": 16, "gpu_model": "H100", "months": 24, "utilization": 0.9,
                  "as_of": "2026-11-30",
                  "prices": {"gpu_usd_each": 24000, "electricity_usd_per_kwh": 0.11,
                             "gpu_clouds": [{"provider": "lambda",
                                             "purchase_option": "committed",
                                             "term_months": 12, "usd_per_gpu_hour": 2.1}]},
                  "assumptions": {"discount_rate_annual": 0.1, "monte_carlo_draws": 500}},
    },
}

TCO_SWEEP_REQUEST_EXAMPLES: dict[str, Example] = {
    "h100_grid": {
        "summary": "8 H100 nodes: cheapest option per utilization and horizon",
        "value": {"tco": {"nodes": 8, "gpu_model": "H100"},
                  "utilizations": [0.2, 0.4, 0.6, 0.8, 1.0],
                  "horizons_months": [12, 24, 36, 48]},
    },
    "h200_own_power_price": {
        "summary": "32 H200 nodes with your electricity price, prices as of a date",
        "value": {"tco": {"nodes": 32, "gpu_model": "H200", "as_of": "2026-11-30",
                          "prices": {"electricity_usd_per_kwh": 0.08}},
                  "utilizations": [0.25, 0.5, 0.75, 1.0],
                  "horizons_months": [12, 36, 60]},
    },
}
