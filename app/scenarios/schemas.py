"""Scenario request and response bodies, and the registry of input kinds.

Adding a kind (throughput, plan): add its request model to `INPUT_MODELS`, widen `ScenarioKind`
and the `inputs` union, and teach `service.compute` to run it. Changing an input model in a way
old payloads no longer validate: bump its version and add an upgrader to `UPGRADERS`.
"""

from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.tco.schemas import TcoRequest, TcoResponse

ScenarioKind = Literal["tco"]
Payload = dict[str, Any]


class InputSpec(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    model: type[BaseModel]
    version: int


INPUT_MODELS: dict[str, InputSpec] = {
    "tco": InputSpec(model=TcoRequest, version=1),
}
# (kind, stored version) -> function turning that payload into the next version's payload.
UPGRADERS: dict[tuple[str, int], Callable[[Payload], Payload]] = {}

NAME_MAX = 120


class ScenarioCreate(BaseModel):
    """A scenario to save. `inputs.as_of` left blank is pinned to today (UTC)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra={
        "examples": [{"name": "64 H100s, 24/7 for two years", "kind": "tco",
                      "inputs": {"nodes": 8, "months": 24, "utilization": 1.0}}]})

    name: str = Field(min_length=1, max_length=NAME_MAX)
    kind: ScenarioKind = "tco"
    inputs: TcoRequest = Field(default_factory=TcoRequest)


class ScenarioFork(BaseModel):
    """Fork a saved scenario into a new one; fields left out are copied from the original."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str | None = Field(None, min_length=1, max_length=NAME_MAX)
    inputs: dict[str, Any] = Field(
        default_factory=dict,
        description="Inputs to change, merged over the original's (e.g. {\"utilization\": 0.5})")


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
    inputs: TcoRequest
    result: TcoResponse
    links: ScenarioLinks
