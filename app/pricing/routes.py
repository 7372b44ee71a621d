"""JSON API of the pricing store: prices in force at a date, and one item's history."""

from typing import Annotated

from fastapi import APIRouter, Path, Query
from sqlalchemy.orm import Session

from app.db import DbSession
from app.pricing import service
from app.pricing.schemas import PriceHistory, PricePage, PriceQuery

router = APIRouter(prefix="/api/v1", tags=["prices"])


@router.get("/prices", response_model=PricePage)
def list_prices(query: Annotated[PriceQuery, Query()],
                session: Session = DbSession) -> PricePage:
    """Prices in force at `as_of` (default today), one per item, with source and date,
    $/GPU-hour and effective hourly (upfront spread over the term). Same filters as the
    /prices page and /prices.csv. Paged by `limit` and `offset` (`total` counts all matching
    rows); ties in the sort are broken by item key, so pages do not overlap. Pin `as_of` when
    paging, so that the default (today, UTC) cannot move between two pages."""
    return service.browse(session, query)


@router.get("/prices/{item_id}/history", response_model=PriceHistory)
def price_history(item_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
                  session: Session = DbSession) -> PriceHistory:
    """Every price an item ever had, oldest first; 404 when the item does not exist."""
    return service.history(session, item_id)
