"""Real HTTP through the app: the page, the htmx fragment, the JSON API and bad input."""

import re

import pytest
from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def _totals(html: str) -> list[float]:
    return [float(x) for x in re.findall(r'data-total="([0-9.]+)"', html)]


def test_home_page_renders_with_default_answer(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert "Rent or buy?" in r.text
    # Every option the snapshot prices gets a card (buy, AWS on-demand, reserved, capacity
    # blocks and mixed strategies at least); the rest are listed as not priced.
    assert len(_totals(r.text)) >= 5
    for key in ("buy", "aws_on_demand", "aws_reserved_1y_partial_upfront"):
        assert f'data-option="{key}"' in r.text
    assert "/static/vendor/htmx.min.js" in r.text
    assert "cdn" not in r.text.lower()


def test_htmx_fragment_changes_with_utilization(client: TestClient) -> None:
    low = client.get("/", params={"utilization": "0.2"}, headers=HX)
    high = client.get("/", params={"utilization": "0.9"}, headers=HX)
    assert low.status_code == high.status_code == 200
    assert "<html" not in low.text  # a fragment, not a page
    assert _totals(low.text) != _totals(high.text)


@pytest.mark.parametrize(("params", "field"), [
    ({"nodes": "-3"}, "nodes"), ({"utilization": "1.7"}, "utilization"),
    ({"months": "abc"}, "months"), ({"as_of": "yesterday"}, "as_of"),
])
def test_bad_form_input_names_the_field(client: TestClient, params: dict[str, str],
                                        field: str) -> None:
    page = client.get("/", params=params)
    assert page.status_code == 422
    assert f"<b>{field}</b>" in page.text
    fragment = client.get("/", params=params, headers=HX)
    assert fragment.status_code == 200
    assert f'id="err-{field}"' in fragment.text


def test_api_tco_matches_hand_computation(client: TestClient) -> None:
    r = client.post("/api/v1/tco", json={"nodes": 8, "months": 24, "utilization": 1.0,
                                         "gpu_model": "H100", "as_of": "2026-11-30"})
    assert r.status_code == 200
    body = r.json()
    totals = {o["key"]: o["total_usd"] for o in body["options"]}
    reserved = totals["aws_reserved_1y_partial_upfront"]
    assert reserved == pytest.approx(8 * 19.50 * 17_520)  # $2,733,120
    assert totals["aws_on_demand"] == pytest.approx(8 * 55.04 * 17_520)  # $7,714,406.40
    assert body["gpu_hours_used"] == pytest.approx(64 * 17_520)
    for opt in body["options"]:
        assert opt["cumulative_usd"][-1] == pytest.approx(sum(opt["monthly_usd"]))
    assert all(p["source"] for p in body["prices_used"])


def test_api_prices_pinned_before_the_june_2025_cut(client: TestClient) -> None:
    # p5 on-demand was $98.32/h before 2025-06-01. Whatever else is priced that early, every
    # price used must be one in force on the date asked for.
    r = client.post("/api/v1/tco", json={"nodes": 1, "months": 1, "as_of": "2025-01-01"})
    assert r.status_code == 200
    body = r.json()
    totals = {o["key"]: o["total_usd"] for o in body["options"]}
    assert totals["aws_on_demand"] == pytest.approx(98.32 * 730)  # 1 node × 730 h
    assert all(p["effective_from"] <= "2025-01-01" for p in body["prices_used"])
    assert body["omitted"]  # the seed's July-2026 figures are not in force yet


def test_api_no_price_at_all_is_422_naming_gpu_model(client: TestClient) -> None:
    r = client.post("/api/v1/tco", json={"nodes": 1, "as_of": "2020-01-01"})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"][0]["field"] == "gpu_model"


@pytest.mark.parametrize(("body", "field"), [
    ({"nodes": -1}, "nodes"), ({"utilization": 1.7}, "utilization"),
    ({"months": "abc"}, "months"), ({"months": 0}, "months"), ({"gpu_model": "Z9"}, "gpu_model"),
    ({"nodes": 8, "surprise": 1}, "surprise"),
])
def test_api_bad_input_is_problem_json_naming_the_field(client: TestClient, body: dict[str, object],
                                                        field: str) -> None:
    r = client.post("/api/v1/tco", json=body)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/problem+json")
    assert field in [e["field"] for e in r.json()["errors"]]


def test_api_rejects_nan_and_malformed_json(client: TestClient) -> None:
    r = client.post("/api/v1/tco", content=b'{"utilization": NaN}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 422
    r = client.post("/api/v1/tco", content=b"{not json",
                    headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_openapi_and_docs(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    assert "/api/v1/tco" in client.get("/openapi.json").json()["paths"]


def test_plotly_served_locally(client: TestClient) -> None:
    r = client.get("/static/vendor/plotly.min.js")
    assert r.status_code == 200
    assert len(r.content) > 1_000_000


def test_schedule_and_discount_rate_from_the_form(client: TestClient) -> None:
    """8 h × 5 days: on-demand bills 40 of 168 hours; reserved bills them all. A discount rate
    of 0% makes NPV equal the total."""
    base = {"nodes": "8", "months": "24", "as_of": "2026-11-30"}
    api = client.post("/api/v1/tco", json={
        "nodes": 8, "months": 24, "as_of": "2026-11-30",
        "profile": {"kind": "schedule", "hours_per_day": 8, "days_per_week": 5},
        "assumptions": {"discount_rate_annual": 0.0}}).json()
    page = client.get("/", params={**base, "usage": "schedule", "hours_per_day": "8",
                                   "days_per_week": "5", "discount_rate": "0"})
    assert page.status_code == 200
    expected = {o["key"]: o["total_usd"] for o in api["options"]}
    rows = dict(re.findall(r'<tr(?: class="best")? data-option="([a-z0-9_.-]+)">\s*<th[^>]*>[^<]*'
                           r'(?:<span[^>]*>[^<]*</span>)?</th>\s*<td class="num" data-sort="'
                           r'([0-9.e+-]+)"', page.text))
    assert {k: float(v) for k, v in rows.items()} == pytest.approx(expected)
    assert "usage=schedule" in page.text  # the export links keep the schedule
    for o in api["options"]:  # at 0% the NPV is the plain sum
        assert o["npv_usd"] == pytest.approx(o["total_usd"])


@pytest.mark.parametrize(("params", "field"), [
    ({"discount_rate": "150"}, "discount_rate"), ({"discount_rate": "abc"}, "discount_rate"),
    ({"usage": "schedule", "hours_per_day": "30"}, "hours_per_day"),
])
def test_bad_assumption_input_is_shown_next_to_its_field(client: TestClient,
                                                         params: dict[str, str],
                                                         field: str) -> None:
    fragment = client.get("/", params=params, headers=HX)
    assert fragment.status_code == 200
    error = re.search(rf'id="err-{field}"[^>]*>([^<]+)<', fragment.text)
    assert error is not None
    assert error.group(1).strip()


def test_gpu_select_lists_every_priced_gpu(client: TestClient) -> None:
    page = client.get("/").text
    options = re.findall(r'<option value="([^"]+)"', page)
    assert {"H100", "H200"} <= set(options)
