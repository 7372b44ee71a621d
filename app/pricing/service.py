"""Pricing use cases shared by the other domains."""

from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy.orm import Session

from app.errors import InvalidInput
from app.pricing import repository
from app.pricing.models import PricePoint


def as_of_instant(as_of: date | None) -> datetime:
    """A price date means "prices in force at the end of that day (UTC)"."""
    day = as_of or datetime.now(UTC).date()
    return datetime.combine(day, time.max, tzinfo=UTC)


def require_price(session: Session, as_of: date | None, field: str, **filters: Any) -> PricePoint:
    """The one price in force for `filters`; a clear error naming `field` when there is none."""
    points = repository.prices_as_of(session, as_of_instant(as_of), filters)
    if not points:
        wanted = ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None)
        day = (as_of or datetime.now(UTC).date()).isoformat()
        raise InvalidInput(field, f"no price recorded for {wanted} as of {day}")
    return points[0]
