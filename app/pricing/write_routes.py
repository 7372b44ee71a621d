"""JSON API writes to the pricing store: authorised clients push dated, sourced prices.

One request is one transaction: the source, the item, the new point, the closing of the
previous point and the audit entry commit together or not at all."""

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.auth import service as auth
from app.auth.dependencies import require_scope
from app.auth.models import ApiKey
from app.db import DbSession
from app.errors import Conflict
from app.pricing import repository
from app.pricing.models import PriceItem, PricePoint, SourceKind
from app.pricing.schemas import PRICE_CREATE_EXAMPLES, PriceCreate, PriceRow
from app.pricing.service import to_row

router = APIRouter(prefix="/api/v1", tags=["prices"])


def _point_values(point: PricePoint | None) -> dict[str, Any] | None:
    if point is None:
        return None
    names = ("id", "item_id", "source_id", "amount", "upfront_usd", "low", "high",
             "effective_from", "effective_to", "retrieved_at", "note")
    return {n: getattr(point, n) for n in names}


def _in_force(session: Session, item: PriceItem, at: datetime) -> PricePoint | None:
    return session.scalar(select(PricePoint).where(
        PricePoint.item_id == item.id, PricePoint.effective_from <= at)
        .order_by(PricePoint.effective_from.desc()).limit(1))


def _push(session: Session,
          new: PriceCreate) -> tuple[PricePoint, dict[str, Any] | None, bool]:
    """(point in force at effective_from, the values of the point it replaced, created?)."""
    fields = new.identity()
    item = repository.get_or_create_item(session, repository.item_key(fields), **fields)
    # Serialise pushes for one item (PostgreSQL row lock; SQLite writes are serial anyway):
    # two concurrent pushes must not both close the same previous point.
    session.execute(select(PriceItem.id).where(PriceItem.id == item.id).with_for_update())
    retrieved_at = new.retrieved_at or new.effective_from
    source = repository.get_or_create_source(
        session, name=new.source_name, retrieved_at=retrieved_at,
        kind=SourceKind.procurement_api, url=new.source_url)
    before = _in_force(session, item, new.effective_from)
    before_values = _point_values(before)
    point = repository.record_price(session, item, source, repository.NewPrice(
        amount=new.amount, effective_from=new.effective_from, retrieved_at=retrieved_at,
        upfront_usd=new.upfront_usd, low=new.low, high=new.high, note=new.note))
    if point is None:  # the same price is already in force: nothing to write
        assert before is not None
        return before, None, False
    session.refresh(point, ["item", "source"])
    return point, before_values, True


@router.post("/prices", response_model=PriceRow, status_code=201,
             responses={200: {"model": PriceRow,
                              "description": "The same price was already in force: unchanged"}})
def create_price(new: Annotated[PriceCreate, Body(openapi_examples=PRICE_CREATE_EXAMPLES)],
                 request: Request, response: Response,
                 key: ApiKey = require_scope("prices:write"),
                 session: Session = DbSession) -> PriceRow:
    """Record a price (needs the `prices:write` scope). 201 with the new point; 200 with the
    existing point when that price is already in force (a repeated push writes nothing); 409
    when the item already has a different price starting at the same instant. Audited."""
    for attempt in (1, 2):
        savepoint = session.begin_nested()
        try:
            point, before, created = _push(session, new)
            savepoint.commit()
            break
        except IntegrityError:
            # A concurrent push created the same item or source first; once more sees it.
            savepoint.rollback()
            if attempt == 2:
                raise Conflict("a concurrent push for this item won; retry") from None
    if not created:
        response.status_code = 200
        return to_row(point)
    auth.audit(session, key, method=request.method, path=request.url.path,
               entity="price_point", entity_id=point.id, before=before,
               after=_point_values(point))
    return to_row(point)
