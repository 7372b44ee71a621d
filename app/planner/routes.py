"""JSON API for the planner."""

from fastapi import APIRouter, Depends
from sqlalchemy.orm import Session

from app.db import get_session
from app.planner.schemas import PlanRequest, PlanResponse
from app.planner.service import make_plan

router = APIRouter(prefix="/api/v1", tags=["planner"])


@router.post("/plan", response_model=PlanResponse)
def post_plan(req: PlanRequest, session: Session = Depends(get_session)) -> PlanResponse:
    """Cheapest cluster and way of paying that trains `total_tokens` by the deadline within
    the budget: ranked options, the time-vs-cost frontier and why the winner wins."""
    return make_plan(session, req)
