"""Pricing use cases shared by the other domains, and the price browser's queries."""

from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import InvalidInput
from app.modelling.finance.money import HOURS_PER_MONTH
from app.pricing import repository
from app.pricing.book import price_book
from app.pricing.models import PriceItem, PricePoint, PriceUnit
from app.pricing.schemas import PriceHistory, PricePage, PricePointOut, PriceQuery, PriceRow


def as_of_instant(as_of: date | None) -> datetime:
    """A price date means "prices in force at the end of that day (UTC)"."""
    day = as_of or datetime.now(UTC).date()
    return datetime.combine(day, time.max, tzinfo=UTC)


def require_price(session: Session, as_of: date | None, field: str, **filters: Any) -> PricePoint:
    """The one price in force for `filters`; a clear error naming `field` when there is none."""
    points = price_book(session, as_of_instant(as_of)).find(**filters)
    if not points:
        wanted = ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None)
        day = (as_of or datetime.now(UTC).date()).isoformat()
        raise InvalidInput(field, f"no price recorded for {wanted} as of {day}")
    return points[0]


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def effective_hourly(amount: float, upfront_usd: float | None,
                     term_months: int | None) -> float:
    """Hourly rate with an upfront fee spread evenly over the term's hours:
    hourly + upfront / (term_months × 730). AWS calls this the "effective hourly rate" of a
    reservation (EC2 Reserved Instances pricing page); 730 h = 8,760 h / 12 as in the finance
    model (`app.modelling.finance.money.HOURS_PER_MONTH`)."""
    if not upfront_usd or not term_months:
        return amount
    return amount + upfront_usd / (term_months * HOURS_PER_MONTH)


def to_row(point: PricePoint) -> PriceRow:
    """A resolved point with its $/GPU-hour and effective hourly normalisations."""
    item = point.item
    amount, upfront = float(point.amount), _num(point.upfront_usd)
    per_hour = gpu_hour = eff_hour = eff_gpu_hour = None
    if item.unit == PriceUnit.usd_per_hour:
        per_hour = amount
        eff_hour = effective_hourly(amount, upfront, item.term_months)
        if item.gpu_count:
            gpu_hour, eff_gpu_hour = per_hour / item.gpu_count, eff_hour / item.gpu_count
    elif item.unit == PriceUnit.usd_per_gpu_hour:
        gpu_hour = amount
        eff_gpu_hour = effective_hourly(amount, upfront, item.term_months)
    # Derived rates keep the store's 10 decimals, not binary float noise.
    gpu_hour, eff_hour, eff_gpu_hour = (None if v is None else round(v, 10)
                                        for v in (gpu_hour, eff_hour, eff_gpu_hour))
    return PriceRow(
        item_id=item.id, item_key=item.item_key, kind=item.kind.value, name=item.name,
        unit=item.unit.value, provider=item.provider, region=item.region,
        availability_zone=item.availability_zone, instance_type=item.instance_type,
        gpu_model=item.gpu_model, gpu_count=item.gpu_count,
        purchase_option=item.purchase_option.value if item.purchase_option else None,
        term_months=item.term_months,
        payment_option=item.payment_option.value if item.payment_option else None,
        offering_class=item.offering_class.value if item.offering_class else None,
        category=item.category, part_number=item.part_number, power_w=item.power_w,
        amount=amount, upfront_usd=upfront, low=_num(point.low), high=_num(point.high),
        currency=point.currency, usd_per_gpu_hour=gpu_hour, effective_usd_per_hour=eff_hour,
        effective_usd_per_gpu_hour=eff_gpu_hour, effective_from=point.effective_from,
        effective_to=point.effective_to, retrieved_at=point.retrieved_at,
        source=point.source.name, source_kind=point.source.kind.value,
        source_url=point.source.url, note=point.note)


def _sort_key(sort: str) -> Any:
    def key(row: PriceRow) -> tuple[bool, Any, str]:
        value = getattr(row, sort)
        return (value is None, value if value is not None else 0, row.item_key)
    return key


def browse(session: Session, query: PriceQuery, *, paged: bool = True) -> PricePage:
    """Prices in force at `query.as_of`, filtered, sorted (missing values last) and paged.
    Resolution is `repository.prices_as_of`; sorting happens here because $/GPU-hour and the
    effective hourly are derived, not stored."""
    as_of = query.as_of or datetime.now(UTC).date()
    points = repository.prices_as_of(session, as_of_instant(as_of), query.filters())
    rows = sorted((to_row(p) for p in points), key=_sort_key(query.sort))
    if query.order == "desc":
        present = [r for r in rows if getattr(r, query.sort) is not None]
        rows = present[::-1] + [r for r in rows if getattr(r, query.sort) is None]
    page = rows[query.offset:query.offset + query.limit] if paged else rows
    return PricePage(as_of=as_of, total=len(rows), limit=query.limit, offset=query.offset,
                     items=page)


def history(session: Session, item_id: int) -> PriceHistory:
    item, points = repository.price_history(session, item_id)
    return PriceHistory(
        item_id=item.id, item_key=item.item_key, name=item.name, unit=item.unit.value,
        points=[PricePointOut(
            amount=float(p.amount), upfront_usd=_num(p.upfront_usd), low=_num(p.low),
            high=_num(p.high), effective_from=p.effective_from, effective_to=p.effective_to,
            retrieved_at=p.retrieved_at, source=p.source.name, source_url=p.source.url,
            note=p.note) for p in points])


def facets(session: Session) -> dict[str, list[str]]:
    """Distinct values for the browser's drop-downs."""
    out = {}
    for name in ("provider", "region", "gpu_model"):
        col = getattr(PriceItem, name)
        out[name] = list(session.scalars(select(col).where(col.is_not(None)).distinct()
                                         .order_by(col)))
    return out
