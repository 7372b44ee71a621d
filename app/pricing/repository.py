"""Pricing queries. Flush, never commit: the caller owns the transaction."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, contains_eager

from app.errors import Conflict
from app.pricing.models import PriceItem, PricePoint, PriceSource

# Item columns a caller may filter on (exact match).
FILTERABLE = (
    "kind", "provider", "region", "availability_zone", "instance_type", "gpu_model",
    "gpu_count", "purchase_option", "term_months", "payment_option", "offering_class", "category",
)


def prices_as_of(
    session: Session, as_of: datetime, filters: Mapping[str, Any] | None = None
) -> list[PricePoint]:
    """The single place that resolves history: the one point per item in force at `as_of`
    (effective_from <= as_of < effective_to), with its item and source loaded."""
    stmt = (
        select(PricePoint)
        .join(PricePoint.item)
        .join(PricePoint.source)
        .options(contains_eager(PricePoint.item), contains_eager(PricePoint.source))
        .where(PricePoint.effective_from <= as_of)
        .where(or_(PricePoint.effective_to.is_(None), PricePoint.effective_to > as_of))
        .order_by(PriceItem.kind, PriceItem.item_key)
    )
    for name, value in (filters or {}).items():
        if name not in FILTERABLE:
            raise ValueError(f"unknown price filter {name!r}")
        if value is not None:
            stmt = stmt.where(getattr(PriceItem, name) == value)
    return list(session.scalars(stmt))


def get_or_create_source(session: Session, *, name: str, retrieved_at: datetime,
                         **fields: Any) -> PriceSource:
    found = session.scalar(select(PriceSource).where(
        PriceSource.name == name, PriceSource.retrieved_at == retrieved_at))
    if found is None:
        found = PriceSource(name=name, retrieved_at=retrieved_at, **fields)
        session.add(found)
        session.flush()
    return found


def get_or_create_item(session: Session, item_key: str, **fields: Any) -> PriceItem:
    found = session.scalar(select(PriceItem).where(PriceItem.item_key == item_key))
    if found is None:
        found = PriceItem(item_key=item_key, **fields)
        session.add(found)
        session.flush()
    return found


@dataclass(frozen=True)
class NewPrice:
    amount: Decimal
    effective_from: datetime
    retrieved_at: datetime
    upfront_usd: Decimal | None = None
    low: Decimal | None = None
    high: Decimal | None = None
    note: str | None = None


def _same(point: PricePoint, new: NewPrice) -> bool:
    return (point.amount == new.amount and point.upfront_usd == new.upfront_usd
            and point.low == new.low and point.high == new.high)


def record_price(session: Session, item: PriceItem, source: PriceSource,
                 new: NewPrice) -> PricePoint | None:
    """Append a price to an item's history, keeping the history a chain of non-overlapping
    intervals. Returns None (and writes nothing) when the price in force is unchanged."""
    points = list(session.scalars(select(PricePoint).where(PricePoint.item_id == item.id)
                                  .order_by(PricePoint.effective_from)))
    before = [p for p in points if p.effective_from <= new.effective_from]
    after = [p for p in points if p.effective_from > new.effective_from]
    if before and _same(before[-1], new):
        return None
    if before and before[-1].effective_from == new.effective_from:
        # History is never rewritten: a different price for the same instant is a conflict.
        raise Conflict(f"{item.item_key} already has a different price effective "
                       f"{new.effective_from.isoformat()}")
    point = PricePoint(item=item, source=source, amount=new.amount, upfront_usd=new.upfront_usd,
                       low=new.low, high=new.high, effective_from=new.effective_from,
                       effective_to=after[0].effective_from if after else None,
                       retrieved_at=new.retrieved_at, note=new.note)
    if before:
        before[-1].effective_to = new.effective_from
    session.add(point)
    session.flush()
    return point
