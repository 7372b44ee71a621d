"""The HTML pages. GET / serves the full page, or just its results block to htmx."""

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.db import get_session
from app.errors import AppError
from app.tco.schemas import TcoRequest
from app.tco.service import compute_tco
from app.web.charts import cumulative_cost_figure
from app.web.templating import templates

router = APIRouter(include_in_schema=False)


def _form_errors(exc: ValidationError) -> dict[str, str]:
    return {".".join(str(p) for p in e["loc"]) or "form": e["msg"] for e in exc.errors()}


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: Session = Depends(get_session)) -> Response:
    raw = {k: v for k, v in request.query_params.items() if v != ""}
    context: dict[str, Any] = {"form": {**TcoRequest().model_dump(), **raw}, "errors": {}}
    status = 200
    try:
        req = TcoRequest.model_validate(raw)
        result = compute_tco(session, req)
        context.update(result=result, chart_json=cumulative_cost_figure(result))
    except ValidationError as exc:
        context["errors"] = _form_errors(exc)
        status = 422
    except AppError as exc:
        context["errors"] = {e["field"]: e["reason"] for e in exc.errors} or {"form": exc.detail}
        status = exc.status
    if request.headers.get("HX-Request") == "true":
        # htmx swaps only 2xx responses; the fragment carries the messages itself.
        return templates.TemplateResponse(request, "index.html", context, block_name="results")
    return templates.TemplateResponse(request, "index.html", context, status_code=status)
