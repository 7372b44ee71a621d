"""Pricing queries. Flush, never commit: the caller owns the transaction."""

import enum
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.orm import Session, contains_eager

from app.errors import Conflict, NotFound
from app.pricing.models import PriceItem, PriceKind, PricePoint, PriceSource

# Item columns a caller may filter on (exact match). Their non-empty values, in this order,
# also make an item's natural key (see `item_key`).
FILTERABLE = (
    "kind", "provider", "region", "availability_zone", "instance_type", "gpu_model",
    "gpu_count", "purchase_option", "term_months", "payment_option", "offering_class", "category",
)
# Kinds whose items are told apart by their name (an equipment model, a facility default).
NAMED_KINDS = (PriceKind.equipment, PriceKind.facility, PriceKind.staff)


def _text(value: object) -> str:
    return str(value.value if isinstance(value, enum.Enum) else value).strip()


def item_key(fields: Mapping[str, object]) -> str:
    """The natural key a price history hangs on, e.g. "cloud_instance/aws/us-east-1/
    p5.48xlarge/H100/8/reserved/12/partial_upfront/standard". One function for every writer
    (snapshot, AWS sync), so the same item is never created twice under two keys."""
    parts = [_text(fields[c]) for c in FILTERABLE if fields.get(c) not in (None, "")]
    if PriceKind(_text(fields["kind"])) in NAMED_KINDS:
        parts.append(_text(fields["name"]))
    return "/".join(parts)


# Knowledge cut-off for reads in the current context (None = everything recorded so far).
_known_at: ContextVar[datetime | None] = ContextVar("prices_known_at", default=None)


@contextmanager
def known_at(when: datetime) -> Iterator[None]:
    """Resolve prices as this store knew them at `when`: points recorded later are ignored.

    A context rather than a parameter because the cut-off belongs to the whole computation
    (a saved scenario's TCO, planner or export reads many prices through several services)."""
    token = _known_at.set(when)
    try:
        yield
    finally:
        _known_at.reset(token)


def known_at_cutoff() -> datetime | None:
    """The `known_at` cut-off of the current context (None: everything recorded so far)."""
    return _known_at.get()


def store_version(session: Session) -> tuple[object, ...]:
    """Changes whenever a price is written: every write inserts a point (a new id, recorded
    now), so (max id, max recorded_at) identifies the store's content. Two index lookups."""
    row = session.execute(select(
        select(func.max(PricePoint.id)).scalar_subquery(),
        select(func.max(PricePoint.recorded_at)).scalar_subquery())).one()
    return tuple(row)


def prices_as_of(
    session: Session, as_of: datetime, filters: Mapping[str, Any] | None = None
) -> list[PricePoint]:
    """The single place that resolves history: the one point per item in force at `as_of`
    (effective_from <= as_of < effective_to), with its item and source loaded."""
    return list(session.scalars(as_of_statement(as_of, filters)))


def as_of_statement(as_of: datetime,
                    filters: Mapping[str, Any] | None = None) -> Select[PricePoint]:
    """The query behind `prices_as_of` (exposed so its plan can be checked on PostgreSQL).

    Now: the point whose [effective_from, effective_to) holds `as_of`. Under a `known_at`
    cut-off, `effective_to` may have been set by a later write, so the point in force is the
    latest effective_from <= as_of among points recorded by then (bitemporal read)."""
    stmt = (
        select(PricePoint)
        .join(PricePoint.item)
        .join(PricePoint.source)
        .options(contains_eager(PricePoint.item), contains_eager(PricePoint.source))
        .where(PricePoint.effective_from <= as_of)
        .order_by(PriceItem.kind, PriceItem.item_key)
    )
    cutoff = _known_at.get()
    if cutoff is None:
        stmt = stmt.where(or_(PricePoint.effective_to.is_(None), PricePoint.effective_to > as_of))
    else:
        latest = (select(PricePoint.item_id, func.max(PricePoint.effective_from).label("ef"))
                  .where(PricePoint.effective_from <= as_of, PricePoint.recorded_at <= cutoff)
                  .group_by(PricePoint.item_id).subquery())
        stmt = stmt.join(latest, and_(latest.c.item_id == PricePoint.item_id,
                                      latest.c.ef == PricePoint.effective_from))
    for name, value in (filters or {}).items():
        if name not in FILTERABLE:
            raise ValueError(f"unknown price filter {name!r}")
        if value is not None:
            stmt = stmt.where(getattr(PriceItem, name) == value)
    return stmt


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


def point_at(session: Session, item: PriceItem, effective_from: datetime) -> PricePoint | None:
    """The point of `item` that starts exactly at `effective_from`, if any."""
    return session.scalar(select(PricePoint).where(PricePoint.item_id == item.id,
                                                   PricePoint.effective_from == effective_from))


def price_history(session: Session, item_id: int) -> tuple[PriceItem, list[PricePoint]]:
    """An item and every point it ever had, oldest first."""
    item = session.get(PriceItem, item_id)
    if item is None:
        raise NotFound(f"no price item {item_id}")
    points = list(session.scalars(
        select(PricePoint).where(PricePoint.item_id == item_id)
        .options(contains_eager(PricePoint.source)).join(PricePoint.source)
        .order_by(PricePoint.effective_from)))
    return item, points


@dataclass(frozen=True)
class NewPrice:
    amount: Decimal
    effective_from: datetime
    retrieved_at: datetime
    upfront_usd: Decimal | None = None
    low: Decimal | None = None
    high: Decimal | None = None
    note: str | None = None


def same_price(point: PricePoint, new: NewPrice) -> bool:
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
    if before and same_price(before[-1], new):
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


def gpu_models(session: Session) -> list[str]:
    """Every GPU model some price item names (what a page may offer to price), sorted."""
    rows = session.scalars(select(PriceItem.gpu_model).where(PriceItem.gpu_model.is_not(None))
                           .distinct())
    return sorted({r for r in rows if r})
