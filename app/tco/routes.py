"""JSON API for the TCO comparison and the seed examples."""

from typing import Annotated

from fastapi import APIRouter, Body, Path
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app import cache
from app.db import DbSession
from app.tco.schemas import (
    TCO_REQUEST_EXAMPLES,
    TCO_SWEEP_REQUEST_EXAMPLES,
    ExampleResult,
    ExampleSummary,
    TcoRequest,
    TcoResponse,
    TcoSweepRequest,
    TcoSweepResponse,
)
from app.tco.service import compute_sweep, compute_tco, list_examples, run_example

router = APIRouter(prefix="/api/v1", tags=["tco"])


@router.post("/tco", response_model=TcoResponse)
async def post_tco(
        req: Annotated[TcoRequest, Body(openapi_examples=TCO_REQUEST_EXAMPLES)]) -> Response:
    """Every way to pay for the cluster that the prices allow: monthly flows, totals, NPV,
    break-even utilization and month, sensitivity and Monte Carlo."""
    body = await cache.priced(cache.request_key("tco", req),
                              lambda session: cache.json_bytes(compute_tco(session, req)))
    return Response(body, media_type="application/json")


@router.post("/tco/sweep", response_model=TcoSweepResponse)
def post_tco_sweep(
        req: Annotated[TcoSweepRequest, Body(openapi_examples=TCO_SWEEP_REQUEST_EXAMPLES)],
        session: Session = DbSession) -> TcoSweepResponse:
    """PV of every option over a utilization × horizon grid, and the cheapest in each cell
    (mixed strategies excluded: they depend on the whole profile)."""
    return compute_sweep(session, req)


@router.get("/tco/examples", response_model=list[ExampleSummary])
def get_examples() -> list[ExampleSummary]:
    """The worked examples from the seed articles."""
    return list_examples()


@router.get("/tco/examples/{name}", response_model=ExampleResult)
def get_example(name: Annotated[str, Path(max_length=64)],
                session: Session = DbSession) -> ExampleResult:
    """One example computed from its inputs, each article claim beside what follows."""
    return run_example(session, name)
