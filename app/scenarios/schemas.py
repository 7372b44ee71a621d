"""Scenario request and response bodies, and the registry of input kinds.

Kinds: "tco" (POST /api/v1/tco), "throughput" (POST /api/v1/throughput), "plan" (POST
/api/v1/plan) and "kv_cache" (POST /api/v1/kv-cache). Adding a kind: add its request model to
`INPUT_MODELS`, widen `ScenarioKind` and the unions, and register its computation in
`service.COMPUTE`. Changing an input model in a way old payloads no longer validate: bump its
version and add an upgrader to `UPGRADERS`.
"""

from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Literal

from fastapi.openapi.models import Example
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails

from app.planner.schemas import PlanRequest, PlanResponse
from app.tco.schemas import TcoRequest, TcoResponse
from app.throughput.schemas import (
    KvCacheRequest,
    KvCacheResponse,
    ThroughputRequest,
    ThroughputResponse,
)

ScenarioKind = Literal["tco", "throughput", "plan", "kv_cache"]
ScenarioInputs = TcoRequest | ThroughputRequest | PlanRequest | KvCacheRequest
ScenarioResult = TcoResponse | ThroughputResponse | PlanResponse | KvCacheResponse
Payload = dict[str, Any]


class InputSpec(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    model: type[BaseModel]
    version: int


INPUT_MODELS: dict[str, InputSpec] = {
    "tco": InputSpec(model=TcoRequest, version=1),
    "throughput": InputSpec(model=ThroughputRequest, version=1),
    "plan": InputSpec(model=PlanRequest, version=1),
    "kv_cache": InputSpec(model=KvCacheRequest, version=1),
}
# (kind, stored version) -> function turning that payload into the next version's payload.
UPGRADERS: dict[tuple[str, int], Callable[[Payload], Payload]] = {}

NAME_MAX = 120


class ScenarioCreate(BaseModel):
    """A scenario to save. `inputs.as_of` left blank is pinned to today (UTC)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=NAME_MAX)
    kind: ScenarioKind = "tco"
    inputs: ScenarioInputs = Field(default_factory=TcoRequest,
                                   description="The request body of the kind's API")

    @model_validator(mode="before")
    @classmethod
    def _inputs_of_the_kind(cls, data: Any) -> Any:
        """Validate `inputs` with the model of `kind` (the union alone cannot tell an empty
        object's kind); errors keep the `inputs.` prefix."""
        if isinstance(data, dict):
            kind = data.get("kind", "tco")
            spec = INPUT_MODELS.get(kind) if isinstance(kind, str) else None
            raw = data.get("inputs")
            if spec is not None and not isinstance(raw, BaseModel):
                try:
                    data = {**data, "inputs": spec.model.model_validate(raw or {})}
                except ValidationError as exc:
                    raise ValidationError.from_exception_data(cls.__name__, [
                        InitErrorDetails(type=e["type"], loc=("inputs", *e["loc"]),
                                         input=e["input"], ctx=e.get("ctx", {}))
                        for e in exc.errors()]) from None
        return data

    @model_validator(mode="after")
    def _kind_matches(self) -> "ScenarioCreate":
        if not isinstance(self.inputs, INPUT_MODELS[self.kind].model):
            raise ValueError(f"inputs are not {self.kind} inputs")
        return self


class ScenarioFork(BaseModel):
    """Fork a saved scenario into a new one; fields left out are copied from the original."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str | None = Field(None, min_length=1, max_length=NAME_MAX)
    inputs: dict[str, Any] = Field(
        default_factory=dict,
        description="Inputs to change, merged over the original's (e.g. {\"utilization\": 0.5})")



# Named request examples shown in the OpenAPI document; tests/test_openapi_examples.py posts
# every one (the forks against a saved TCO scenario) and expects 2xx.
SCENARIO_CREATE_EXAMPLES: dict[str, Example] = {
    "tco": {
        "summary": "A TCO comparison: 64 H100s, 24/7 for two years",
        "description": "`inputs` is the body of POST /api/v1/tco; `as_of` is left out, so "
                       "the scenario is pinned to today's prices.",
        "value": {"name": "64 H100s, 24/7 for two years", "kind": "tco",
                  "inputs": {"nodes": 8, "gpu_model": "H100", "months": 24,
                             "utilization": 1.0}},
    },
    "plan": {
        "summary": "A plan: the seed 90B model in 48 h on 32 H100 nodes",
        "value": {"name": "90B in 48 h, H100 on NDR", "kind": "plan",
                  "inputs": {"model": "seed-90b", "deadline_hours": 48,
                             "gpu_types": ["H100"], "node_counts": [32],
                             "fabrics": ["InfiniBand NDR"], "as_of": "2026-11-30"}},
    },
    "throughput": {
        "summary": "A throughput estimate: Llama 3 70B on 64 H100",
        "value": {"name": "Llama 3 70B on 64 H100, NDR", "kind": "throughput",
                  "inputs": {"model": {"preset": "llama3-70b"}, "gpu": "H100 SXM 80GB",
                             "nodes": 8, "scale_out_fabric": "InfiniBand NDR"}},
    },
    "kv_cache": {
        "summary": "A KV-cache sizing: Llama 2 7B at 1M tokens on H200",
        "value": {"name": "Llama 2 7B, 1M-token context", "kind": "kv_cache",
                  "inputs": {"model": {"preset": "llama2-7b"}, "context_tokens": 1_048_576,
                             "gpu": "H200 SXM 141GB"}},
    },
}

# For a TCO scenario (fields of POST /api/v1/tco); other kinds take their own request fields.
SCENARIO_FORK_EXAMPLES: dict[str, Example] = {
    "half_utilization": {
        "summary": "The same cluster at 50% utilization",
        "value": {"name": "64 H100s at 50% for two years", "inputs": {"utilization": 0.5}},
    },
    "office_hours": {
        "summary": "The same cluster used 8 h x 5 days",
        "value": {"name": "64 H100s, office hours",
                  "inputs": {"profile": {"kind": "schedule", "hours_per_day": 8,
                                         "days_per_week": 5}}},
    },
    "three_years_own_gpu_price": {
        "summary": "Three years instead of two, with your own GPU quote",
        "description": "Each top-level field given replaces the original's whole: this "
                       "`prices` replaces the original's price overrides.",
        "value": {"inputs": {"months": 36, "prices": {"gpu_usd_each": 24000}}},
    },
}

class ScenarioLinks(BaseModel):
    page: str
    api: str
    export_csv: str
    export_xlsx: str


class ScenarioOut(BaseModel):
    share_id: str
    name: str
    kind: ScenarioKind
    schema_version: int
    as_of: date = Field(description="Pinned pricing date: the scenario always uses these prices")
    created_at: datetime
    forked_from: str | None = Field(None, description="share_id of the scenario it was forked from")
    inputs: ScenarioInputs
    result: ScenarioResult
    links: ScenarioLinks
