"""The named request examples of the OpenAPI document: every JSON request body has some, each
validates against its body model, and the API accepts each one as it stands (2xx)."""

import json
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from app.auth import service as auth
from app.db import session_scope
from app.main import app as the_app
from app.scenarios.schemas import SCENARIO_CREATE_EXAMPLES

SPEC = the_app.openapi()
JSON = "application/json"
# The request bodies issue 8 asks to be documented with examples.
DOCUMENTED = {("POST", "/api/v1/tco"), ("POST", "/api/v1/tco/sweep"),
              ("POST", "/api/v1/throughput"), ("POST", "/api/v1/kv-cache"),
              ("POST", "/api/v1/plan"), ("POST", "/api/v1/prices"),
              ("POST", "/api/v1/scenarios"), ("POST", "/api/v1/scenarios/{share_id}/fork")}


def _bodies() -> dict[tuple[str, str], dict[str, Any]]:
    """(method, path) -> the JSON request body of every operation that has one."""
    return {(method.upper(), path): op["requestBody"]["content"][JSON]
            for path, ops in SPEC["paths"].items() for method, op in ops.items()
            if JSON in op.get("requestBody", {}).get("content", {})}


EXAMPLES = [(method, path, name, example["value"])
            for (method, path), body in _bodies().items()
            for name, example in body.get("examples", {}).items()]
IDS = [f"{m} {p} {name}" for m, p, name, _ in EXAMPLES]


def test_every_json_request_body_has_named_examples() -> None:
    bodies = _bodies()
    assert set(bodies) == DOCUMENTED  # no body left out, and none unknown to this test
    for where, body in bodies.items():
        examples = body.get("examples", {})
        assert examples, where
        for name, example in examples.items():
            assert example["summary"], (where, name)
            assert isinstance(example["value"], dict), (where, name)
    summaries = {e["summary"] for e in bodies[("POST", "/api/v1/tco")]["examples"].values()}
    assert {"8 H100 nodes for 3 years at 80%", "A schedule profile: 8 h x 5 days"} <= summaries


def _route(method: str, path: str) -> APIRoute:
    for context in iter_route_contexts(the_app.routes):
        route = context.route
        if isinstance(route, APIRoute) and route.path == path \
                and method in (route.methods or set()) and route.body_field is not None:
            return route
    raise AssertionError(f"no route {method} {path} with a body")


def test_examples_reach_the_document_unchanged() -> None:
    # FastAPI drops null values from examples: an example relying on one (say, to clear a
    # default) would be documented as something else.
    for method, path in DOCUMENTED:
        declared = getattr(_route(method, path).dependant.body_params[0].field_info,
                           "openapi_examples", None)  # a fastapi.params.Body
        documented = _bodies()[(method, path)]["examples"]
        assert declared is not None
        assert {n: e["value"] for n, e in declared.items()} == \
            {n: e["value"] for n, e in documented.items()}, (method, path)


@pytest.mark.parametrize(("method", "path", "name", "value"), EXAMPLES, ids=IDS)
def test_example_validates_against_its_body_model(method: str, path: str, name: str,
                                                  value: dict[str, Any]) -> None:
    body = _route(method, path).body_field
    assert body is not None
    model: Any = body.field_info.annotation
    TypeAdapter(model).validate_json(json.dumps(value))


@pytest.fixture
def writer(client: TestClient, database_url: str) -> dict[str, str]:
    with session_scope(database_url) as session, session.begin():
        token = auth.create_key(session, "examples", ["prices:write"]).token
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tco_share_id(client: TestClient) -> str:
    """A saved TCO scenario (the create example), for the fork examples."""
    r = client.post("/api/v1/scenarios", json=SCENARIO_CREATE_EXAMPLES["tco"]["value"])
    assert r.status_code == 201, r.text
    return str(r.json()["share_id"])


@pytest.mark.parametrize(("method", "path", "name", "value"), EXAMPLES, ids=IDS)
def test_example_is_accepted_by_the_api(client: TestClient, writer: dict[str, str],
                                        tco_share_id: str, method: str, path: str, name: str,
                                        value: dict[str, Any]) -> None:
    headers = writer if path == "/api/v1/prices" else {}
    url = path.replace("{share_id}", tco_share_id)
    r = client.request(method, url, json=value, headers=headers)
    assert 200 <= r.status_code < 300, r.text


def _example(path: str, name: str) -> dict[str, Any]:
    value: dict[str, Any] = _bodies()[("POST", path)]["examples"][name]["value"]
    return value


def test_tco_examples_say_what_they_compute(client: TestClient) -> None:
    at_80 = client.post("/api/v1/tco", json=_example("/api/v1/tco", "h100_3_years_80_percent"))
    assert at_80.status_code == 200, at_80.text
    body = at_80.json()
    assert body["gpus"] == 8 * 8  # 8 nodes of 8 GPUs
    assert body["months"] == 36
    assert body["mean_utilization"] == pytest.approx(0.8)
    office = client.post("/api/v1/tco", json=_example("/api/v1/tco", "schedule_8h_5d"))
    assert office.status_code == 200, office.text
    assert office.json()["mean_utilization"] == pytest.approx(8 * 5 / 168)  # 0.238: "24%"


def test_the_switch_example_updates_the_catalogued_switch(client: TestClient,
                                                          writer: dict[str, str]) -> None:
    quote = _example("/api/v1/prices", "switch_price_update")
    r = client.post("/api/v1/prices", json=quote, headers=writer)
    assert r.status_code in (200, 201), r.text  # 200: the parametrized test pushed it first
    points = client.get(f"/api/v1/prices/{r.json()['item_id']}/history").json()["points"]
    # The snapshot's point is closed where the quote starts: an update, not a new item.
    assert len(points) >= 2
    assert points[-1]["amount"] == 27500
    assert points[-2]["effective_to"] == points[-1]["effective_from"]
    assert points[-1]["effective_from"].startswith("2027-01-01")
