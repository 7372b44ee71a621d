"""Price browser and API bodies: the filter query (shared by the page, CSV and JSON) and rows."""

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal

from fastapi.openapi.models import Example
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

from app.pricing.models import OfferingClass, PaymentOption, PriceKind, PriceUnit, PurchaseOption

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
    offset: int = Field(0, ge=0, le=1_000_000,
                        description="Rows to skip: page n (from 0) is offset = n × limit; "
                                    "`total` in the answer counts every matching row")

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


# A JSON number or a decimal string ("2.49", exact); the store keeps 10 decimals.
MoneyIn = Annotated[
    Decimal, Field(ge=0, le=999_999_999, max_digits=20, decimal_places=10),
    WithJsonSchema({"anyOf": [
        {"type": "number", "minimum": 0, "maximum": 999_999_999},
        {"type": "string", "maxLength": 21, "pattern": r"^[0-9]{1,9}(\.[0-9]{1,10})?$"}]})]


class PriceCreate(BaseModel):
    """One dated, sourced price pushed by an authorised client (a vendor quote, a contract).
    The identity fields say *what* is priced; the same identity always updates the same item."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: PriceKind = Field(examples=["gpu_cloud"])
    name: str = Field(min_length=1, max_length=200, examples=["H100 SXM on Lambda, 1-year"])
    unit: PriceUnit = Field(examples=["usd_per_gpu_hour"])
    provider: str | None = Field(None, max_length=64, pattern=NAME, examples=["lambda"])
    region: str | None = Field(None, max_length=64, pattern=NAME)
    availability_zone: str | None = Field(None, max_length=64, pattern=NAME)
    instance_type: str | None = Field(None, max_length=64, pattern=NAME)
    gpu_model: str | None = Field(None, max_length=64, pattern=NAME, examples=["H100"])
    gpu_count: int | None = Field(None, ge=1, le=100_000)
    purchase_option: PurchaseOption | None = Field(None, examples=["committed"])
    term_months: int | None = Field(None, ge=1, le=120, examples=[12])
    payment_option: PaymentOption | None = None
    offering_class: OfferingClass | None = None
    category: str | None = Field(None, max_length=64, pattern=NAME)
    part_number: str | None = Field(None, max_length=64, pattern=NAME)
    power_w: float | None = Field(None, ge=0, le=1_000_000)
    amount: MoneyIn = Field(description="In `unit`", examples=["2.49"])
    upfront_usd: MoneyIn | None = None
    low: MoneyIn | None = None
    high: MoneyIn | None = None
    effective_from: AwareDatetime = Field(examples=["2026-11-01T00:00:00Z"])
    retrieved_at: AwareDatetime | None = Field(
        None, description="When the quote was obtained; default `effective_from`")
    source_name: str = Field(min_length=1, max_length=200, examples=["Lambda quote Q-1042"])
    source_url: str | None = Field(None, max_length=2000, pattern=r"^https?://\S+$")
    note: str | None = Field(None, max_length=2000)

    @model_validator(mode="after")
    def _range_ordered(self) -> "PriceCreate":
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError("low must not exceed high")
        return self

    IDENTITY: ClassVar[tuple[str, ...]] = (
        "kind", "name", "unit", "provider", "region", "availability_zone", "instance_type",
        "gpu_model", "gpu_count", "purchase_option", "term_months", "payment_option",
        "offering_class", "category", "part_number", "power_w")

    def identity(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.IDENTITY}


# Named request examples shown in the OpenAPI document (POST /api/v1/prices);
# tests/test_openapi_examples.py pushes every one with a `prices:write` key and expects 2xx.
PRICE_CREATE_EXAMPLES: dict[str, Example] = {
    "gpu_cloud_committed_quote": {
        "summary": "A GPU cloud's quote: H200 for a 1-year term, from next month",
        "description": "A new item (the identity fields say what is priced); pushing the "
                       "same body again answers 200 and writes nothing.",
        "value": {"kind": "gpu_cloud", "name": "Lambda H200 SXM, 1-year reserved",
                  "unit": "usd_per_gpu_hour", "provider": "lambda", "region": "global",
                  "gpu_model": "H200", "purchase_option": "committed", "term_months": 12,
                  "amount": "2.29", "effective_from": "2027-01-01T00:00:00Z",
                  "retrieved_at": "2026-11-28T15:30:00Z",
                  "source_name": "Lambda quote Q-2026-1187",
                  "note": "8x H200 SXM nodes with InfiniBand, billed monthly"},
    },
    "switch_price_update": {
        "summary": "An equipment vendor's new price for a catalogued switch, with its range",
        "description": "The same identity as the snapshot's Quantum-2 switch: the new point "
                       "closes the previous one from `effective_from`.",
        "value": {"kind": "equipment",
                  "name": "NVIDIA Quantum-2 QM9790 64-port NDR InfiniBand switch",
                  "unit": "usd_each", "provider": "nvidia", "category": "ib_switch",
                  "power_w": 1720, "amount": "27500", "low": "25000", "high": "31000",
                  "effective_from": "2027-01-01T00:00:00Z",
                  "source_name": "Reseller quote RQ-5521"},
    },
}
