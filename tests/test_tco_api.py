"""POST /api/v1/tco and the seed examples over real HTTP; the service over a real session."""

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.pricing import repository
from app.pricing.models import PriceKind, PriceUnit, PurchaseOption, SourceKind
from app.pricing.snapshot import load_snapshot
from app.tco.schemas import TcoRequest
from app.tco.service import compute_tco

# A procurement tool's own quote for everything: no price comes from the store.
QUOTE: dict[str, Any] = {
    "gpu_usd_each": 25_000, "server_usd_per_node": 35_000, "server_busy_kw": 10.0,
    "ib_switch_usd_each": 40_000, "ib_switch_kw_each": 0.0, "eth_switch_usd_each": 20_000,
    "nic_usd_each": 1_500, "cable_usd_each": 300, "transceiver_usd_each": 900,
    "rack_usd_each": 15_000, "storage_usd": 300_000, "idle_power_fraction": 0.3, "pue": 1.3,
    "electricity_usd_per_kwh": 0.08, "staff_usd_per_fte_year": 150_000,
    "colo_usd_per_kw_month": 184.06, "aws_on_demand_usd_per_node_hour": 55.04,
    "aws_spot_usd_per_node_hour": 22.0, "aws_capacity_block_usd_per_node_hour": 39.33,
    "aws_reserved": [
        {"term_months": 12, "payment_option": "no_upfront", "usd_per_node_hour": 30.0},
        {"term_months": 36, "payment_option": "all_upfront", "usd_per_node_hour": 0.0,
         "upfront_usd_per_node": 500_000},
    ],
    "aws_savings_plans": [{"term_months": 36, "usd_per_node_hour": 24.0}],
    "gpu_clouds": [{"provider": "neocloud", "usd_per_gpu_hour": 2.5},
                   {"provider": "neocloud", "purchase_option": "committed", "term_months": 12,
                    "usd_per_gpu_hour": 2.0}],
}


def _post(client: TestClient, **body: Any) -> Any:
    r = client.post("/api/v1/tco", json={"as_of": "2026-11-30", "prices": QUOTE, **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_every_option_from_an_explicit_quote(client: TestClient) -> None:
    body = _post(client, nodes=4, months=36, utilization=0.5)
    totals = {o["key"]: o["total_usd"] for o in body["options"]}
    assert set(totals) == {
        "buy", "colo", "aws_on_demand", "aws_spot", "aws_capacity_block",
        "aws_reserved_1y_no_upfront", "aws_reserved_3y_all_upfront", "aws_savings_plan_3y",
        "gpu_cloud_neocloud_on_demand", "gpu_cloud_neocloud_committed_12m",
        "mixed_reserved_on_demand", "mixed_reserved_spot", "mixed_buy_on_demand"}
    hours = 36 * 730  # 26,280 h
    assert totals["aws_on_demand"] == pytest.approx(4 * 55.04 * hours * 0.5)  # $2,892,902.40
    # Spot: 1.2 billed hours per useful hour (0.2/h × (0.5 h + 1/3 h) lost) → 4 × 22 × 0.5 × 1.2
    assert totals["aws_spot"] == pytest.approx(4 * 22.0 * hours * 0.5 * 1.2)
    assert totals["aws_reserved_3y_all_upfront"] == pytest.approx(4 * 500_000)
    assert totals["aws_reserved_1y_no_upfront"] == pytest.approx(4 * 30.0 * hours)
    assert totals["gpu_cloud_neocloud_on_demand"] == pytest.approx(4 * 8 * 2.5 * hours * 0.5)
    assert body["gpu_hours_used"] == pytest.approx(32 * hours * 0.5)
    for o in body["options"]:
        assert o["cumulative_usd"][-1] == pytest.approx(sum(o["monthly_usd"]))
        assert len(o["monthly_usd"]) == 36
    buy = next(o for o in body["options"] if o["key"] == "buy")
    assert buy["capex_usd"]["gpus"] == pytest.approx(4 * 8 * 25_000)
    assert body["network"]["leaf_switches"] == 1  # 32 ports fit one switch
    assert body["prices_used"]
    assert all(p["source"] == "request" for p in body["prices_used"])


def test_break_even_sensitivity_and_monte_carlo(client: TestClient) -> None:
    body = _post(client, nodes=8, months=24, utilization=0.6)
    pairs = {(b["first"], b["second"]): b for b in body["break_even"]}
    be = pairs[("buy", "aws_on_demand")]
    assert 0 < be["utilization"] < 1
    # Checking the solved point: both options at that constant utilization cost the same.
    at = _post(client, nodes=8, months=24, utilization=be["utilization"])
    npv = {o["key"]: o["npv_usd"] for o in at["options"]}
    assert npv["buy"] == pytest.approx(npv["aws_on_demand"], abs=0.01)
    sens = body["sensitivity"]
    assert sens["buy"] == "buy"
    swings = [r["swing_usd"] for r in sens["rows"]]
    assert swings == sorted(swings, reverse=True)
    assert swings[0] > 0
    assert "utilization" in [r["input"] for r in sens["rows"]]
    mc = body["monte_carlo"]
    p10, p50, p90 = mc["difference_usd_p10_p50_p90"]
    assert p10 <= p50 <= p90
    assert mc == _post(client, nodes=8, months=24, utilization=0.6)["monte_carlo"]  # seeded


def test_schedule_and_series_profiles(client: TestClient) -> None:
    sched = _post(client, nodes=2, months=12, profile={"kind": "schedule", "hours_per_day": 8,
                                                       "days_per_week": 5})
    assert sched["mean_utilization"] == pytest.approx(40 / 168)
    series = [0.1] * 6 + [1.0] * 3 + [0.1] * 3
    burst = _post(client, nodes=10, months=12,
                  profile={"kind": "series", "monthly_utilization": series})
    mixed = next(o for o in burst["options"] if o["key"] == "mixed_reserved_on_demand")
    assert mixed["baseline_nodes"] == 1  # one node busy 9 months: reserve it, rent the burst


def test_defaults_come_from_the_store_and_missing_prices_are_named(client: TestClient) -> None:
    # A region no snapshot row covers: only the region-less equipment rows are found, and
    # every option needing a regional price is omitted, naming it. On-demand is posted.
    r = client.post("/api/v1/tco", json={"nodes": 8, "as_of": "2026-11-30",
                                         "region": "xx-test-1",
                                         "prices": {"aws_on_demand_usd_per_node_hour": 50}})
    assert r.status_code == 200, r.text
    body = r.json()
    omitted = {o["key"]: " ".join(o["missing"]) for o in body["omitted"]}
    assert "electricity_usd_per_kwh" in omitted["buy"]
    assert "region in ['xx-test-1', 'xx']" in omitted["buy"]
    assert "colo_usd_per_kw_month" in omitted["colo"]
    assert "aws_spot_usd_per_node_hour" in omitted["aws_spot"]
    # GPU clouds price globally; of the AWS options only the posted on-demand rate remains.
    assert [o["key"] for o in body["options"] if o["family"] == "cloud"] == ["aws_on_demand"]
    assert any(p["source"] != "request" for p in body["prices_used"])  # the GPU row, say


@pytest.mark.parametrize(("body", "field"), [
    ({"prices": {"gpu_usd_each": -1}}, "prices.gpu_usd_each"),
    ({"months": 0}, "months"),
    ({"utilization": 1.01}, "utilization"),
    ({"assumptions": {"discount_rate_annual": -0.1}}, "assumptions.discount_rate_annual"),
    ({"profile": {"kind": "schedule", "hours_per_day": 25}},
     "profile.schedule.hours_per_day"),
    ({"months": 3, "profile": {"kind": "series", "monthly_utilization": [0.5, 0.5]}},
     "profile"),
    ({"prices": {"aws_reserved": [{"term_months": 24, "payment_option": "no_upfront",
                                   "usd_per_node_hour": 1}]}},
     "prices.aws_reserved.0.term_months"),
])
def test_invalid_input_is_422_naming_the_field(client: TestClient, body: dict[str, Any],
                                               field: str) -> None:
    r = client.post("/api/v1/tco", json=body)
    assert r.status_code == 422
    assert field in [e["field"] for e in r.json()["errors"]]


def test_nan_in_a_nested_price_is_422(client: TestClient) -> None:
    r = client.post("/api/v1/tco", content=b'{"prices": {"pue": NaN}}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_store_rows_added_by_a_fixture_become_options(session: Session) -> None:
    load_snapshot(session)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    src = repository.get_or_create_source(session, name="test quotes", kind=SourceKind.manual,
                                          retrieved_at=at)
    rows = [
        ("spot/aws/us-east-1/H100", {"kind": PriceKind.spot, "provider": "aws",
                                     "region": "us-east-1", "gpu_model": "H100",
                                     "unit": PriceUnit.usd_per_hour}, "0.5"),
        ("colocation/us", {"kind": PriceKind.colocation, "region": "us",
                               "unit": PriceUnit.usd_per_kw_month}, "184.06"),
        ("gpu_cloud/testcloud/H100", {"kind": PriceKind.gpu_cloud, "provider": "testcloud",
                                       "gpu_model": "H100", "unit": PriceUnit.usd_per_gpu_hour,
                                       "purchase_option": PurchaseOption.on_demand}, "2.99"),
    ]
    for key, fields, amount in rows:
        item = repository.get_or_create_item(session, f"test/{key}", name=key, **fields)
        repository.record_price(session, item, src, repository.NewPrice(Decimal(amount), at, at))
    result = compute_tco(session, TcoRequest(nodes=2, months=12, as_of=date(2026, 11, 30)))
    totals = {o.key: o.total_usd for o in result.options}
    assert totals["gpu_cloud_testcloud_on_demand"] == pytest.approx(2 * 8 * 2.99 * 8_760)
    # The cheapest spot row in force wins: 2 nodes × $0.50 × 8,760 h × 1.2 (re-work)
    assert totals["aws_spot"] == pytest.approx(2 * 0.5 * 8_760 * 1.2)
    assert "colo" in totals


def test_examples_list_and_seed_000_by_hand(client: TestClient) -> None:
    names = [e["name"] for e in client.get("/api/v1/tco/examples").json()]
    assert {"seed000-h200-64gpu-2y-24x7", "seed000-h200-64gpu-2y-8x5",
            "seed001-256gpu-48h-window"} <= set(names)
    assert len([n for n in names if n.endswith("cloud-vs-colo")]) == 4
    full = client.get("/api/v1/tco/examples/seed000-h200-64gpu-2y-24x7").json()
    claims = {c["option"]: c for c in full["claims"]}
    # 1,672,000 hardware + 8 × 10 kW × 1.3 × 17,520 h × $0.08 + 2 × $150,000 staff
    assert claims["buy"]["computed_usd"] == pytest.approx(1_672_000 + 145_766.4 + 300_000)
    assert claims["buy"]["article_usd"] == 2_600_000
    # 8 × $19.50 × 17,520 h + $150K egress and SageMaker
    assert claims["aws_reserved_1y_partial_upfront"]["computed_usd"] == pytest.approx(2_883_120)
    part = client.get("/api/v1/tco/examples/seed000-h200-64gpu-2y-8x5").json()
    totals = {o["key"]: o["total_usd"] for o in part["result"]["options"]}
    assert totals["aws_reserved_1y_partial_upfront"] == pytest.approx(2_733_120)
    assert totals["aws_on_demand"] == pytest.approx(8 * 31.58 * 17_520 * 40 / 168)


def test_every_example_computes(client: TestClient) -> None:
    for e in client.get("/api/v1/tco/examples").json():
        r = client.get(f"/api/v1/tco/examples/{e['name']}")
        assert r.status_code == 200, e["name"]
        assert r.json()["notes"]
    window = client.get("/api/v1/tco/examples/seed001-256gpu-48h-window").json()
    claims = {c["option"]: c["computed_usd"] for c in window["claims"]}
    assert claims["aws_reserved_1y_partial_upfront"] == pytest.approx(32 * 19.50 * 730)
    assert claims["aws_on_demand"] == pytest.approx(32 * 55.04 * 730 * 41 / 168)
    assert client.get("/api/v1/tco/examples/nope").status_code == 404


def test_break_even_for_requested_pairs(client: TestClient) -> None:
    body = _post(client, nodes=2, months=12,
                 break_even_pairs=[["aws_spot", "aws_on_demand"], ["colo", "buy"]])
    pairs = [(b["first"], b["second"]) for b in body["break_even"]]
    assert pairs == [("aws_spot", "aws_on_demand"), ("colo", "buy")]
    # Spot and on-demand are both linear through zero: equal only at u = 0, spot cheaper above.
    assert body["break_even"][0]["utilization"] == 0.0
    assert body["break_even"][0]["first_cheaper_above"] is True
    bad = client.post("/api/v1/tco", json={"prices": QUOTE, "as_of": "2026-11-30",
                                           "break_even_pairs": [["buy", "nope"]]})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "break_even_pairs.0"
    mixed = client.post("/api/v1/tco", json={
        "prices": QUOTE, "as_of": "2026-11-30",
        "break_even_pairs": [["buy", "mixed_buy_on_demand"]]})
    assert "mixed strategy" in mixed.json()["errors"][0]["reason"]


def test_committed_gpu_cloud_needs_a_term(client: TestClient) -> None:
    r = client.post("/api/v1/tco", json={"prices": {"gpu_clouds": [
        {"provider": "x", "purchase_option": "committed", "usd_per_gpu_hour": 2}]}})
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "prices.gpu_clouds.0.term_months"


def test_sweep_grid_and_cheapest(client: TestClient) -> None:
    r = client.post("/api/v1/tco/sweep", json={
        "tco": {"nodes": 2, "as_of": "2026-11-30", "prices": QUOTE,
                "assumptions": {"discount_rate_annual": 0.0}},
        "utilizations": [0.0, 0.5, 1.0], "horizons_months": [12, 36]})
    assert r.status_code == 200, r.text
    body = r.json()
    i = body["options"].index("aws_on_demand")
    # On-demand, no discounting: 2 nodes × $55.04 × 730 h × months × u
    assert body["npv_usd"][i][1][0] == pytest.approx(2 * 55.04 * 730 * 12 * 0.5)
    assert body["npv_usd"][i][0][1] == 0.0
    assert body["cheapest"][0][0] in ("aws_on_demand", "aws_spot", "gpu_cloud_neocloud_on_demand")
    bad = client.post("/api/v1/tco/sweep", json={"utilizations": [1.5]})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "utilizations.0"


def test_gpu_cloud_spot_is_its_own_option_and_pays_for_re_work(client: TestClient) -> None:
    # Spot re-work (defaults): λ = 0.2/h, checkpoint 1 h, restart 1/3 h →
    # lost = 0.2 × (0.5 + 1/3) = 1/6, billed hours per useful hour = 1 / (1 − 1/6) = 1.2.
    r = client.post("/api/v1/tco", json={
        "nodes": 2, "months": 1, "utilization": 1.0, "as_of": "2026-11-30",
        "prices": {"gpu_clouds": [
            {"provider": "neocloud", "purchase_option": "on_demand", "usd_per_gpu_hour": 2.0},
            {"provider": "neocloud", "purchase_option": "spot", "usd_per_gpu_hour": 1.0}]}})
    assert r.status_code == 200, r.text
    totals = {o["key"]: o["total_usd"] for o in r.json()["options"]}
    # 2 nodes × 8 GPUs × 730 h: on-demand × $2 = $23,360; spot × $1 × 1.2 = $14,016
    assert totals["gpu_cloud_neocloud_on_demand"] == pytest.approx(16 * 730 * 2.0)
    assert totals["gpu_cloud_neocloud_spot"] == pytest.approx(16 * 730 * 1.0 * 1.2)
