"""Planner endpoints: POST /api/v1/plan (JSON), GET /planner (page or htmx results block)
and GET /planner/option/{id} (one option's breakdown beside the winner, an htmx fragment)."""

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Body, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import ImmutableMultiDict

from app import cache
from app.db import DbSession
from app.errors import AppError, NotFound
from app.modelling.throughput import PRESETS
from app.planner.charts import breakdown_figure, time_cost_figure
from app.planner.schemas import (
    ALL_PAYMENTS,
    PLAN_REQUEST_EXAMPLES,
    PlanRequest,
    PlanResponse,
    gpu_keys,
    scale_out_fabrics,
)
from app.planner.service import (
    LABELS,
    compute_plan,
    make_plan,
    option_detail,
    respond,
    runner_up,
)
from app.web.templating import templates

router = APIRouter(prefix="/api/v1", tags=["planner"])
pages = APIRouter(include_in_schema=False)

LIST_FIELDS = ("gpu_types", "fabrics", "payments")
CSV_FIELDS = ("node_counts", "oversubscription")
BLANK_IS_NONE = ("budget_usd", "budget_usd_per_month", "colo_usd_per_kw_month")


@router.post("/plan", response_model=PlanResponse)
async def post_plan(
        req: Annotated[PlanRequest, Body(openapi_examples=PLAN_REQUEST_EXAMPLES)]) -> Response:
    """Cheapest cluster and way of paying that trains `total_tokens` by the deadline within
    the budget: ranked options, the time-vs-cost frontier and why the winner wins."""
    body = await cache.priced(cache.request_key("plan", req),
                              lambda session: cache.json_bytes(make_plan(session, req)))
    return Response(body, media_type="application/json")


def _form_input(request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
    return form_input(request.query_params)


def form_input(q: ImmutableMultiDict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Query string or posted form -> (raw values for the form, values for PlanRequest).
    Check-box lists come as repeated keys; node counts and ratios as comma-separated text."""
    submitted = q.get("submitted") == "1"
    # "kind" and "name" belong to the Save & share fieldset, not to the plan.
    raw: dict[str, Any] = {k: v for k, v in q.items()
                           if v != "" and k not in ("submitted", "kind", "name")}
    data: dict[str, Any] = {k: v for k, v in raw.items()
                            if k not in LIST_FIELDS + CSV_FIELDS}
    for name in LIST_FIELDS:
        if submitted or name in q:
            data[name] = raw[name] = q.getlist(name)
    for name in BLANK_IS_NONE:
        if submitted and q.get(name, "") == "":
            data[name] = None  # a cleared budget means "no budget", not the default
            raw[name] = ""
    for name in CSV_FIELDS:
        if name in raw:
            data[name] = [x.strip() for x in str(raw[name]).split(",") if x.strip()]
    return raw, data


FORM_FIELDS = ("model", "total_tokens", "deadline_hours", "budget_usd_per_month", "budget_usd",
               "mode", "utilization", "gpu_types", "node_counts", "fabrics", "oversubscription",
               "payments", "colo_usd_per_kw_month", "as_of")


def form_query(req: PlanRequest) -> str:
    """The /planner query holding the form's fields of `req` (a saved plan's fork and its
    option links)."""
    values = req.model_dump(mode="json", include=set(FORM_FIELDS))
    pairs: list[tuple[str, str]] = [("submitted", "1")]
    for name in FORM_FIELDS:
        v = values[name]
        if name in LIST_FIELDS:
            pairs += [(name, str(x)) for x in v]
        elif name in CSV_FIELDS:
            pairs.append((name, ", ".join(f"{x:g}" for x in v)))
        else:
            pairs.append((name, "" if v is None else f"{v:g}" if isinstance(v, float) else str(v)))
    return urlencode(pairs)


def results_context(session: Session, req: PlanRequest, query: str) -> dict[str, Any]:
    """What _planner_results.html needs."""
    computed = compute_plan(session, req)
    result = respond(session, computed)
    context: dict[str, Any] = {"result": result, "chart_json": time_cost_figure(computed),
                               "query": query}
    e = result.explanation
    if e is not None:
        context["breakdown_json"] = breakdown_figure(
            [e.winner, e.runner_up] if e.runner_up else [e.winner])
    return context


def _defaults() -> dict[str, Any]:
    d = PlanRequest().model_dump()
    for name, value in d.items():
        if isinstance(value, float):
            d[name] = f"{value:.6g}"
    for name in CSV_FIELDS:
        d[name] = ", ".join(f"{x:g}" for x in d[name])
    return d


def _choices() -> dict[str, Any]:
    return {"presets": sorted(PRESETS), "gpus": sorted(gpu_keys()),
            "fabrics": scale_out_fabrics(), "payments": ALL_PAYMENTS, "labels": LABELS}


def _errors(exc: ValidationError) -> dict[str, str]:
    return {str(e["loc"][0]) if e["loc"] else "form": e["msg"] for e in exc.errors()}


@pages.get("/planner", response_class=HTMLResponse)
def planner_page(request: Request, session: Session = DbSession) -> Response:
    raw, data = _form_input(request)
    form = {**_defaults(), **raw}
    for name in LIST_FIELDS:
        form[name] = raw.get(name, _defaults()[name])
    context: dict[str, Any] = {"form": form, "errors": {}, "choices": _choices(),
                               "query": request.url.query}
    status = 200
    try:
        context.update(results_context(session, PlanRequest.model_validate(data),
                                       request.url.query))
    except ValidationError as exc:
        context["errors"], status = _errors(exc), 422
    except AppError as exc:
        context["errors"] = {e["field"]: e["reason"] for e in exc.errors} or {"form": exc.detail}
        status = exc.status
    if request.headers.get("HX-Request") == "true":
        return templates.TemplateResponse(request, "planner.html", context,
                                          block_name="results")
    return templates.TemplateResponse(request, "planner.html", context, status_code=status)


@pages.get("/planner/option/{option_id}", response_class=HTMLResponse)
def planner_option(option_id: int, request: Request,
                   session: Session = DbSession) -> Response:
    """One option's step-time and cost breakdown beside the winner's (or the runner-up's,
    when the option is the winner)."""
    _, data = _form_input(request)
    try:
        req = PlanRequest.model_validate(data)
    except ValidationError as exc:
        errs = _errors(exc)
        raise AppError("invalid planner inputs",
                       errors=[{"field": k, "reason": v} for k, v in errs.items()]) from None
    computed = compute_plan(session, req)
    p = computed.plan
    if not 0 <= option_id < len(p):
        raise NotFound(f"option {option_id} does not exist in this plan")
    pool = p.ranked if len(p.ranked) else p.by_cost
    other = int(pool[0]) if len(pool) else None
    if other == option_id:
        other = runner_up(p, option_id)
    a = option_detail(computed, option_id)
    b = option_detail(computed, other) if other is not None else None
    context = {"a": a, "b": b, "breakdown_json": breakdown_figure([a, b] if b else [a])}
    return templates.TemplateResponse(request, "planner_option.html", context)
