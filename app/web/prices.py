"""The price browser page (GET /prices) and its CSV export (GET /prices.csv).

The filter state lives in the query string, so a filtered, sorted view is a shareable URL; the
JSON twin is GET /api/v1/prices (app/pricing/routes.py) with the same `PriceQuery`."""

import csv
import io
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.db import DbSession
from app.errors import InvalidInput
from app.pricing import service
from app.pricing.models import PriceKind, PurchaseOption
from app.pricing.schemas import PriceQuery, PriceRow
from app.web.templating import templates

router = APIRouter(include_in_schema=False)
CSV_COLUMNS = tuple(PriceRow.model_fields)
FILTER_NAMES = ("kind", "provider", "region", "gpu_model", "purchase_option", "as_of")


def _raw(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.items() if v != ""}


def _errors(exc: ValidationError) -> dict[str, str]:
    return {".".join(str(p) for p in e["loc"]) or "query": e["msg"] for e in exc.errors()}


def _link(raw: dict[str, str], **changes: object) -> str:
    params = {**raw, **{k: str(v) for k, v in changes.items()}}
    return "/prices?" + urlencode({k: v for k, v in params.items() if v != ""})


@router.get("/prices", response_class=HTMLResponse)
def prices_page(request: Request, session: Session = DbSession) -> Response:
    raw = _raw(request)
    context: dict[str, Any] = {
        "form": raw, "errors": {}, "facets": service.facets(session),
        "kinds": [k.value for k in PriceKind],
        "purchase_options": [p.value for p in PurchaseOption],
        "link": lambda **c: _link(raw, **c), "csv_url": "/prices.csv?" + urlencode(
            {k: v for k, v in raw.items() if k not in ("limit", "offset")}),
    }
    status = 200
    try:
        query = PriceQuery.model_validate(raw)
        context.update(query=query, page=service.browse(session, query))
    except ValidationError as exc:
        context["errors"] = _errors(exc)
        status = 422
    if request.headers.get("HX-Request") == "true":
        # htmx swaps only 2xx responses; the fragment carries the messages itself.
        return templates.TemplateResponse(request, "prices.html", context, block_name="table")
    return templates.TemplateResponse(request, "prices.html", context, status_code=status)


@router.get("/prices.csv")
def prices_csv(request: Request, session: Session = DbSession) -> Response:
    """Every row matching the filters (not paged), one column per `PriceRow` field."""
    try:
        query = PriceQuery.model_validate(_raw(request))
    except ValidationError as exc:
        field, reason = next(iter(_errors(exc).items()))
        raise InvalidInput(field, reason) from exc
    page = service.browse(session, query, paged=False)
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in page.items:
        writer.writerow(row.model_dump(mode="json"))
    name = f"clustertco-prices-{page.as_of.isoformat()}.csv"
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
