"""The HTML pages: the workspace (GET /, or its results block for htmx), saving and opening
shared scenarios, their exports, and the methodology page. Every page renders server-side, so
it works without JavaScript; htmx only swaps the results in place."""

from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app import cache
from app.db import DbSession
from app.errors import AppError, InvalidInput, NotFound
from app.modelling.finance.money import HOURS_PER_MONTH
from app.pricing.repository import gpu_models, prices_as_of
from app.pricing.service import as_of_instant
from app.scenarios import service as scenarios
from app.scenarios.examples import EXAMPLES
from app.scenarios.report import ReportMeta, export
from app.scenarios.routes import base_url, file_response
from app.scenarios.schemas import NAME_MAX, ScenarioCreate
from app.tco.schemas import Assumptions, TcoRequest
from app.tco.service import compute_tco
from app.web import shared, workspace_form
from app.web.results import result_context
from app.web.templating import templates

router = APIRouter(include_in_schema=False)
HX_HEADER = "HX-Request"


def _workspace(session: Session, raw: dict[str, str]) -> tuple[dict[str, Any], int]:
    """Validate the form and compute; the context carries either a result or field errors."""
    inputs = {k: v for k, v in raw.items() if k in workspace_form.FIELDS and v != ""}
    context: dict[str, Any] = {"form": {**workspace_form.defaults(), **inputs,
                                        "name": raw.get("name", "")}, "errors": {},
                               "gpu_models": gpu_models(session)}
    try:
        req = workspace_form.request_from_form(inputs)
        context.update(result_context(session, compute_tco(session, req)))
    except workspace_form.FormError as exc:
        context["errors"] = exc.errors
        return context, 422
    except AppError as exc:
        context["errors"] = {e["field"]: e["reason"] for e in exc.errors} or {"form": exc.detail}
        return context, exc.status
    context["export_base"] = "/export"
    context["export_query"] = "?" + workspace_form.query(req)
    return context, 200


def _error_page(request: Request, status: int, heading: str, detail: str) -> Response:
    return templates.TemplateResponse(request, "error.html",
                                      {"heading": heading, "detail": detail}, status_code=status)


def _is_htmx(request: Request) -> bool:
    return request.headers.get(HX_HEADER) == "true"


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: Session = DbSession) -> Response:
    context, status = _workspace(session, dict(request.query_params))
    if _is_htmx(request):
        # htmx swaps only 2xx responses; the fragment carries the messages itself.
        return templates.TemplateResponse(request, "index.html", context, block_name="results")
    context["examples"] = scenarios.examples(session)
    return templates.TemplateResponse(request, "index.html", context, status_code=status)


@router.post("/s", response_class=HTMLResponse)
async def save_and_share(request: Request, session: Session = DbSession) -> Response:
    """Every page's "Save & share": store the scenario (its `kind` a hidden field; the
    workspace's when absent), then show its link (303)."""
    form = await request.form()
    raw = {k: v for k, v in form.items() if isinstance(v, str)}
    kind = raw.get("kind", "tco")
    if kind in shared.FORM_PARSERS:
        return _save_other(request, session, kind, form, raw.get("name", "").strip())
    context, status = _workspace(session, raw)
    name = raw.get("name", "").strip()
    if len(name) > NAME_MAX:
        context["errors"]["name"] = f"at most {NAME_MAX} characters"
        status = 422
    if status != 200:
        context["examples"] = scenarios.examples(session)
        return templates.TemplateResponse(request, "index.html", context, status_code=status)
    req: TcoRequest = context["result"].request
    saved = scenarios.save(session, ScenarioCreate(name=name or shared.tco_summary(req),
                                                   inputs=req))
    return RedirectResponse(f"/s/{saved.share_id}", status_code=303)


def _save_other(request: Request, session: Session, kind: str, form: FormData,
                name: str) -> Response:
    try:
        inputs, default_name = shared.FORM_PARSERS[kind](form)
    except ValidationError as exc:
        detail = "; ".join(f"{k}: {v}" for k, v in shared.form_errors(exc).items())
        return _error_page(request, 422, "Check the inputs, then save again.", detail)
    if len(name) > NAME_MAX:
        return _error_page(request, 422, "Check the inputs, then save again.",
                           f"name: at most {NAME_MAX} characters")
    saved = scenarios.save(session, ScenarioCreate(name=name or default_name[:NAME_MAX],
                                                   kind=kind, inputs=inputs))
    return RedirectResponse(f"/s/{saved.share_id}", status_code=303)


@router.get("/s/{share_id}", response_class=HTMLResponse)
async def shared_scenario(request: Request, share_id: str) -> Response:
    """A saved scenario, read-only, recomputed with its pinned prices; needs no session.
    Any unknown id (however malformed) gets the same HTML 404 page. A saved scenario never
    changes, so its page is rendered once per price-store version (see `app.cache`)."""
    key = ("share-page", share_id, str(request.base_url))
    try:
        return HTMLResponse(await cache.priced(
            key, lambda session: _shared_page(request, session, share_id)))
    except NotFound:
        return _error_page(request, 404, "No scenario at this link.",
                           "Check the link you were sent (share ids are case-sensitive).")
    except AppError as exc:
        return _error_page(request, exc.status, "This scenario cannot be computed.", exc.detail)


def _shared_page(request: Request, session: Session, share_id: str) -> bytes:
    scenario = scenarios.get(session, share_id)
    shown = shared.view(session, scenario)
    example = next((e for e in EXAMPLES if e.share_id == scenario.share_id), None)
    context = {**shown.context, "scenario": scenario, "errors": {}, "view": shown,
               "example": example,
               "fork_url": shown.fork_url,
               "export_base": f"/s/{scenario.share_id}/export", "export_query": ""}
    return bytes(templates.TemplateResponse(request, "scenario.html", context).body)


@router.get("/s/{share_id}/export.{fmt}")
def shared_export(request: Request, fmt: Literal["csv", "xlsx"], share_id: str,
                  session: Session = DbSession) -> Response:
    scenario = scenarios.get(session, share_id)
    return file_response(scenarios.export(session, scenario, fmt, base_url(request)))


@router.get("/export.{fmt}")
def workspace_export(request: Request, fmt: Literal["csv", "xlsx"],
                     session: Session = DbSession) -> Response:
    """The live workspace's numbers for its query string (the inputs as on the page)."""
    raw = {k: v for k, v in request.query_params.items() if v != ""}
    try:
        req = workspace_form.request_from_form(raw)
    except workspace_form.FormError as exc:
        (field, reason), *_ = exc.errors.items()
        err = InvalidInput(field, reason)
        err.errors = [{"field": k, "reason": v} for k, v in exc.errors.items()]
        raise err from exc
    result = compute_tco(session, req)
    meta = ReportMeta(title=shared.tco_summary(req),
                      link=f"{base_url(request)}/?{workspace_form.query(req)}")
    return file_response(export(result, meta, fmt))


@router.get("/methodology", response_class=HTMLResponse)
def methodology(request: Request, session: Session = DbSession) -> Response:
    """Every formula and default, with its source; prices are those in force today."""
    today = datetime.now(UTC).date()
    context = {
        "today": today, "hours_per_month": HOURS_PER_MONTH,
        "defaults": Assumptions(),
        "prices": prices_as_of(session, as_of_instant(today)),
    }
    return templates.TemplateResponse(request, "methodology.html", context)
