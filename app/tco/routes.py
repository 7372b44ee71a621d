"""JSON API for the TCO comparison."""

from fastapi import APIRouter, Depends
from sqlalchemy.orm import Session

from app.db import get_session
from app.tco.schemas import TcoRequest, TcoResponse
from app.tco.service import compute_tco

router = APIRouter(prefix="/api/v1", tags=["tco"])


@router.post("/tco", response_model=TcoResponse)
def post_tco(req: TcoRequest, session: Session = Depends(get_session)) -> TcoResponse:
    """Compare buying, AWS on-demand and AWS 1-year reserved for one cluster."""
    return compute_tco(session, req)
