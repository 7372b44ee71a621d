"""Throughput: JSON API and the page."""

from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Body, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError

from app import cache
from app.errors import AppError
from app.hardware import catalog
from app.modelling.throughput import PRESETS
from app.throughput.charts import memory_figure, scaling_figure, step_figure
from app.throughput.schemas import (
    KV_CACHE_REQUEST_EXAMPLES,
    THROUGHPUT_REQUEST_EXAMPLES,
    KvCacheRequest,
    KvCacheResponse,
    ModelInput,
    ThroughputRequest,
    ThroughputResponse,
)
from app.throughput.service import compute_kv_cache, compute_throughput
from app.web.templating import templates

router = APIRouter(prefix="/api/v1", tags=["throughput"])
pages = APIRouter(include_in_schema=False)

# Form fields of the page (flat); the model preset maps to ThroughputRequest.model.preset.
FORM_FIELDS = ("preset", "gpu", "nodes", "scale_out_fabric", "oversubscription",
               "global_batch_seqs", "total_tokens", "precision", "recompute")


@router.post("/throughput", response_model=ThroughputResponse)
def post_throughput(
        req: Annotated[ThroughputRequest, Body(openapi_examples=THROUGHPUT_REQUEST_EXAMPLES)],
) -> Response:
    """Step time, memory, MFU, tokens/day, goodput and time to train for one cluster, plus
    the throughput-vs-GPU-count curve on several scale-out fabrics. Pure computation."""
    body = cache.remember(("throughput", req.model_dump_json()),
                          lambda: cache.json_bytes(compute_throughput(req)))
    return Response(body, media_type="application/json")


@router.post("/kv-cache", response_model=KvCacheResponse)
def post_kv_cache(
        req: Annotated[KvCacheRequest, Body(openapi_examples=KV_CACHE_REQUEST_EXAMPLES)],
) -> KvCacheResponse:
    """Inference KV-cache memory for a context, and the GPUs context parallelism needs."""
    return compute_kv_cache(req)


def request_from_form(raw: Mapping[str, str]) -> ThroughputRequest:
    body: dict[str, Any] = {k: v for k, v in raw.items()
                            if k in FORM_FIELDS and k != "preset" and v != ""}
    body["model"] = ModelInput(preset=raw.get("preset") or "llama3-70b")
    return ThroughputRequest.model_validate(body)


def form_query(req: ThroughputRequest) -> str:
    """The /throughput query holding the form's fields of `req` (a saved scenario's fork)."""
    values = req.model_dump(mode="json", include=set(FORM_FIELDS))
    values["total_tokens"] = f"{req.total_tokens:g}"
    values = {"preset": req.model.preset or "", **values}
    return urlencode({k: values[k] for k in FORM_FIELDS if values.get(k) is not None})


def results_context(result: ThroughputResponse) -> dict[str, Any]:
    """What _throughput_results.html needs."""
    return {"result": result, "step_json": step_figure(result),
            "memory_json": memory_figure(result), "scaling_json": scaling_figure(result)}


def kv_context(req: KvCacheRequest) -> dict[str, Any]:
    """What _kv_cache_results.html needs."""
    return {"kv": compute_kv_cache(req), "kv_req": req}


@pages.get("/throughput", response_class=HTMLResponse)
def throughput_page(request: Request) -> Response:
    raw = {k: v for k, v in request.query_params.items() if v != ""}
    defaults = ThroughputRequest()
    form = {"preset": "llama3-70b", **defaults.model_dump(include=set(FORM_FIELDS)),
            "total_tokens": f"{defaults.total_tokens:g}", **raw}
    context: dict[str, Any] = {
        "form": form, "errors": {}, "presets": sorted(PRESETS),
        "gpus": sorted(catalog.load_gpus()),
        "fabrics": [f.name for f in catalog.load_fabrics().values()
                    if f.kind not in ("nvlink", "pcie")]}
    status = 200
    try:
        context.update(results_context(compute_throughput(request_from_form(raw))))
    except ValidationError as exc:
        context["errors"] = {str(e["loc"][-1]) if e["loc"] else "form": e["msg"]
                             for e in exc.errors()}
        status = 422
    except AppError as exc:
        context["errors"] = {e["field"]: e["reason"] for e in exc.errors} or {"form": exc.detail}
        status = exc.status
    if request.headers.get("HX-Request") == "true":
        return templates.TemplateResponse(request, "throughput.html", context,
                                          block_name="results")
    context.update(kv_context(KvCacheRequest()))  # the seed's 1M-token case, below the form
    return templates.TemplateResponse(request, "throughput.html", context, status_code=status)
