"""Price browser and API bodies: the filter query (shared by the page, CSV and JSON) and rows."""

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.pricing.models import PriceKind, PurchaseOption

NAME = r"^[A-Za-z0-9][A-Za-z0-9 ._/+-]*$"
SortKey = Literal["kind", "name", "provider", "region", "instance_type", "gpu_model",
                  "purchase_option", "term_months", "amount", "usd_per_gpu_hour",
                  "effective_usd_per_hour", "effective_from", "source"]


class PriceQuery(BaseModel):
    """Filters (exact match, all optional), sort and page. An empty value means "any", so an
    HTML form can submit every field."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: PriceKind | None = None
    provider: str | None = Field(None, max_length=64, pattern=NAME, examples=["aws"])
    region: str | None = Field(None, max_length=64, pattern=NAME, examples=["us-east-1"])
    gpu_model: str | None = Field(None, max_length=64, pattern=NAME, examples=["H100"])
    purchase_option: PurchaseOption | None = None
    category: str | None = Field(None, max_length=64, pattern=NAME, examples=["gpu"])
    instance_type: str | None = Field(None, max_length=64, pattern=NAME)
    as_of: date | None = Field(None, description="Prices in force at the end of this day "
                                                 "(UTC); default today")
    sort: SortKey = "kind"
    order: Literal["asc", "desc"] = "asc"
    limit: int = Field(100, ge=1, le=1000, description="Rows per page (1 to 1,000)")
    offset: int = Field(0, ge=0, le=1_000_000)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_any(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v not in ("", None)}
        return data

    def filters(self) -> dict[str, object]:
        names = ("kind", "provider", "region", "gpu_model", "purchase_option", "category",
                 "instance_type")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


class PriceRow(BaseModel):
    item_id: int
    item_key: str
    kind: str
    name: str
    unit: str
    provider: str | None
    region: str | None
    availability_zone: str | None
    instance_type: str | None
    gpu_model: str | None
    gpu_count: int | None
    purchase_option: str | None
    term_months: int | None
    payment_option: str | None
    offering_class: str | None
    category: str | None
    part_number: str | None
    power_w: float | None
    amount: float = Field(description="In `unit`")
    upfront_usd: float | None
    low: float | None = Field(description="Low end of the known range, when only a range is")
    high: float | None
    currency: str
    usd_per_gpu_hour: float | None = Field(
        description="Hourly rate per GPU (instance rate / GPUs); null when not hourly")
    effective_usd_per_hour: float | None = Field(
        description="Hourly rate with the upfront fee spread over the term: "
                    "hourly + upfront / (term_months × 730)")
    effective_usd_per_gpu_hour: float | None
    effective_from: datetime
    effective_to: datetime | None
    retrieved_at: datetime
    source: str
    source_kind: str
    source_url: str | None
    note: str | None


class PricePage(BaseModel):
    as_of: date
    total: int = Field(description="Rows matching the filters, before paging")
    limit: int
    offset: int
    items: list[PriceRow]


class PricePointOut(BaseModel):
    amount: float
    upfront_usd: float | None
    low: float | None
    high: float | None
    effective_from: datetime
    effective_to: datetime | None
    retrieved_at: datetime
    source: str
    source_url: str | None
    note: str | None


class PriceHistory(BaseModel):
    item_id: int
    item_key: str
    name: str
    unit: str
    points: list[PricePointOut]
