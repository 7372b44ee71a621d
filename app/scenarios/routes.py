"""JSON API for saved scenarios: create, read by share id, fork, export."""

from typing import Annotated

from fastapi import APIRouter, Body, Path, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.db import DbSession
from app.scenarios import service
from app.scenarios.report import MEDIA_TYPES, ExportFile
from app.scenarios.schemas import (
    SCENARIO_CREATE_EXAMPLES,
    SCENARIO_FORK_EXAMPLES,
    ScenarioCreate,
    ScenarioFork,
    ScenarioOut,
)

router = APIRouter(prefix="/api/v1/scenarios", tags=["scenarios"])


def file_response(file: ExportFile) -> Response:
    """A download: the browser saves it under `file.filename`."""
    return Response(file.content, media_type=file.media_type, headers={
        "Content-Disposition": f'attachment; filename="{file.filename}"'})


def base_url(request: Request) -> str:
    """Scheme and host the client used, without the trailing slash (for links in files)."""
    return str(request.base_url).rstrip("/")


ShareId = Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$",
               description="The scenario's share id (the part after /s/ in its link)")


@router.post("", response_model=ScenarioOut, status_code=201)
def create_scenario(
        new: Annotated[ScenarioCreate, Body(openapi_examples=SCENARIO_CREATE_EXAMPLES)],
        session: Session = DbSession) -> ScenarioOut:
    """Save an immutable scenario; a blank `inputs.as_of` is pinned to today (UTC)."""
    return service.to_out(session, service.save(session, new))


@router.get("/{share_id}", response_model=ScenarioOut)
def get_scenario(share_id: str = ShareId, session: Session = DbSession) -> ScenarioOut:
    """The saved scenario and its result, recomputed with its pinned prices."""
    return service.to_out(session, service.get(session, share_id))


@router.post("/{share_id}/fork", response_model=ScenarioOut, status_code=201)
def fork_scenario(change: Annotated[ScenarioFork, Body(openapi_examples=SCENARIO_FORK_EXAMPLES)],
                  share_id: str = ShareId,
                  session: Session = DbSession) -> ScenarioOut:
    """Save a new scenario from this one with some inputs changed; the original never changes."""
    return service.to_out(session, service.fork(session, share_id, change))


@router.get("/{share_id}/export.csv", response_class=Response,
            responses={200: {"content": {"text/csv": {}}}})
def export_csv(request: Request, share_id: str = ShareId,
               session: Session = DbSession) -> Response:
    """Comparison, monthly cash flows, inputs and price sources as one sectioned CSV."""
    return file_response(service.export(session, service.get(session, share_id), "csv",
                                        base_url(request)))


@router.get("/{share_id}/export.xlsx", response_class=Response,
            responses={200: {"content": {MEDIA_TYPES["xlsx"]: {}}}})
def export_xlsx(request: Request, share_id: str = ShareId,
               session: Session = DbSession) -> Response:
    """Comparison, monthly cash flows, and inputs & sources as three XLSX sheets."""
    return file_response(service.export(session, service.get(session, share_id), "xlsx",
                                        base_url(request)))
