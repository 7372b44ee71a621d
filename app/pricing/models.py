"""Pricing store tables.

A `PriceItem` is *what* is priced (an AWS instance under one purchase option, a GPU, a switch,
colocation in a region...). A `PricePoint` is one dated, sourced price of that item. History is
never overwritten: a newer point closes the previous one (`effective_to`) and a query "as of" a
date resolves to exactly one point per item (see `repository.prices_as_of`).
"""

import enum
from datetime import UTC, datetime
from decimal import Decimal

from sqlalchemy import (
    CheckConstraint,
    Enum,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, UtcDateTime

MONEY = Numeric(20, 10)  # AWS publishes rates with 10 decimals


class SourceKind(enum.StrEnum):
    snapshot = "snapshot"
    aws_api = "aws_api"
    manual = "manual"
    procurement_api = "procurement_api"


class PriceKind(enum.StrEnum):
    cloud_instance = "cloud_instance"  # AWS (or other hyperscaler) instance, any purchase option
    spot = "spot"  # spot price history, per availability zone
    gpu_cloud = "gpu_cloud"  # non-AWS GPU clouds, $/GPU-hour
    equipment = "equipment"  # capex: GPUs, servers, switches, NICs, cables, storage, racks
    colocation = "colocation"  # $/kW-month
    electricity = "electricity"  # $/kWh
    facility = "facility"  # non-money facility defaults, e.g. PUE (unit "ratio")
    staff = "staff"  # $/FTE-year


class PurchaseOption(enum.StrEnum):
    on_demand = "on_demand"
    reserved = "reserved"
    compute_savings_plan = "compute_savings_plan"
    instance_savings_plan = "instance_savings_plan"
    spot = "spot"
    capacity_block = "capacity_block"
    committed = "committed"  # a GPU cloud's term contract


class PaymentOption(enum.StrEnum):
    no_upfront = "no_upfront"
    partial_upfront = "partial_upfront"
    all_upfront = "all_upfront"


class OfferingClass(enum.StrEnum):
    standard = "standard"
    convertible = "convertible"


class PriceUnit(enum.StrEnum):
    usd_per_hour = "usd_per_hour"  # per instance-hour
    usd_per_gpu_hour = "usd_per_gpu_hour"
    usd_each = "usd_each"
    usd_per_kw_month = "usd_per_kw_month"
    usd_per_kwh = "usd_per_kwh"
    usd_per_tb = "usd_per_tb"  # storage priced per usable terabyte
    usd_per_fte_year = "usd_per_fte_year"
    ratio = "ratio"


def _enum(cls: type[enum.Enum]) -> Enum:
    # Stored as plain strings (no native PG enum types): adding a member needs no DDL.
    return Enum(cls, native_enum=False, length=32, validate_strings=True)


class PriceSource(Base):
    __tablename__ = "price_source"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[SourceKind] = mapped_column(_enum(SourceKind))
    url: Mapped[str | None] = mapped_column(Text)
    retrieved_at: Mapped[datetime] = mapped_column(UtcDateTime())
    notes: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (UniqueConstraint("name", "retrieved_at"),)


# `category` of a row that records a market statistic over several offers ("lowest spot seen
# on specialised clouds", a median, a typical rate), not an offer anyone can rent: the price
# browser lists it, but no TCO or planner option is ever priced from it
# (see pricing_data/README.md, "Market observations").
MARKET_OBSERVATION = "market_observation"


class PriceItem(Base):
    __tablename__ = "price_item"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Natural key, e.g. "cloud_instance/aws/us-east-1/p5.48xlarge/reserved/12/partial_upfront/
    # standard": the identity a price history hangs on.
    item_key: Mapped[str] = mapped_column(String(300), unique=True)
    kind: Mapped[PriceKind] = mapped_column(_enum(PriceKind))
    name: Mapped[str] = mapped_column(String(200))
    unit: Mapped[PriceUnit] = mapped_column(_enum(PriceUnit))
    provider: Mapped[str | None] = mapped_column(String(64))  # aws, coreweave, nvidia, ...
    region: Mapped[str | None] = mapped_column(String(64))
    availability_zone: Mapped[str | None] = mapped_column(String(64))
    instance_type: Mapped[str | None] = mapped_column(String(64))
    gpu_model: Mapped[str | None] = mapped_column(String(64))
    gpu_count: Mapped[int | None] = mapped_column(Integer)
    purchase_option: Mapped[PurchaseOption | None] = mapped_column(_enum(PurchaseOption))
    term_months: Mapped[int | None] = mapped_column(Integer)
    payment_option: Mapped[PaymentOption | None] = mapped_column(_enum(PaymentOption))
    offering_class: Mapped[OfferingClass | None] = mapped_column(_enum(OfferingClass))
    category: Mapped[str | None] = mapped_column(String(64))  # equipment: gpu, server, nic...
    power_w: Mapped[float | None] = mapped_column(Numeric(12, 2, asdecimal=False))
    # Vendor part number (MQM9790-NS2F) or AWS SKU: what a buyer quotes against.
    part_number: Mapped[str | None] = mapped_column(String(64))

    points: Mapped[list["PricePoint"]] = relationship(back_populates="item")

    @property
    def is_offer(self) -> bool:
        """Whether someone can actually pay this price (False for a market observation)."""
        return self.category != MARKET_OBSERVATION

    # The browser and the TCO engine filter on these before resolving each item's point.
    __table_args__ = (
        Index(None, "kind", "gpu_model"),
        Index("ix_price_item_kind_category", "kind", "category"),
        Index("ix_price_item_kind_provider_region", "kind", "provider", "region",
              "instance_type", "purchase_option"),
    )


class PricePoint(Base):
    __tablename__ = "price_point"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("price_item.id", ondelete="RESTRICT"))
    source_id: Mapped[int] = mapped_column(ForeignKey("price_source.id", ondelete="RESTRICT"))
    amount: Mapped[Decimal] = mapped_column(MONEY)  # in the item's unit
    upfront_usd: Mapped[Decimal | None] = mapped_column(MONEY)  # reserved / all-upfront fees
    low: Mapped[Decimal | None] = mapped_column(MONEY)  # where only a range is known
    high: Mapped[Decimal | None] = mapped_column(MONEY)
    currency: Mapped[str] = mapped_column(String(3), default="USD")
    effective_from: Mapped[datetime] = mapped_column(UtcDateTime())
    effective_to: Mapped[datetime | None] = mapped_column(UtcDateTime())
    retrieved_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # When this store learnt the price (transaction time). A saved scenario reads prices as
    # known when it was saved, so a later backfill cannot change a shared link's numbers.
    recorded_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=lambda: datetime.now(UTC))
    note: Mapped[str | None] = mapped_column(Text)

    item: Mapped[PriceItem] = relationship(back_populates="points")
    source: Mapped[PriceSource] = relationship()

    # The unique index doubles as the lookup path: resolving "as of" is an index range scan on
    # (item_id, effective_from) per item (see tests/test_pricing_indexes.py for the plan).
    __table_args__ = (
        UniqueConstraint("item_id", "effective_from"),
        Index("ix_price_point_source_id", "source_id"),
        # max(recorded_at) is half the store's version (`repository.store_version`).
        Index("ix_price_point_recorded_at", "recorded_at"),
        CheckConstraint("amount >= 0", name="amount_not_negative"),
        CheckConstraint("effective_to IS NULL OR effective_to > effective_from",
                        name="interval_not_empty"),
    )
