"""The planner through HTTP: the seeds' case study, an infeasible request, bad input, missing
prices, and the page."""

import json
import math
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}
AS_OF = "2026-11-30"


def _figure(html: str, element_id: str) -> dict[str, Any]:
    """The Plotly figure JSON embedded in the element with this id (data-figure)."""
    m = re.search(rf'id="{element_id}" data-figure="([^"]+)"', html)
    assert m is not None, element_id
    raw = m.group(1).replace("&#34;", '"').replace("&quot;", '"').replace("&#39;", "'")
    return dict(json.loads(raw.replace("&amp;", "&")))


def _plan(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/v1/plan", json={"as_of": AS_OF, **body})
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_seed_case_study_returns_ranked_feasible_options(client: TestClient) -> None:
    body = _plan(client)  # defaults = seed 001 case: 90B, 48 h, $500K/month, NDR400 etc.
    assert body["model"] == "seed-90b"
    assert 85e9 < body["total_params"] < 95e9
    assert body["feasible_count"] > 0
    opts = body["options"]
    costs = [o["cost_usd"] for o in opts]
    assert costs == sorted(costs)
    for o in opts:
        assert o["feasible"]
        assert 0 < o["wall_hours"] <= 48.0
        assert o["cost_usd"] > 0
        assert o["usd_per_1b_tokens"] == pytest.approx(o["cost_usd"] / 31.0)
        assert o["layout"].startswith("TP")
        assert o["fabric"]
    assert [o["rank"] for o in opts] == list(range(1, len(opts) + 1))
    assert body["frontier"]
    hours = [o["wall_hours"] for o in body["frontier"]]
    assert hours == sorted(hours)
    frontier_costs = [o["cost_usd"] for o in body["frontier"]]
    assert frontier_costs == sorted(frontier_costs, reverse=True)
    e = body["explanation"]
    assert e["winner"]["option"]["id"] == opts[0]["id"]
    assert e["runner_up"]["option"]["payment"] != opts[0]["payment"]
    assert e["runner_up_price"]["sentence"]
    assert sum(e["winner"]["step_seconds"][k] for k in e["winner"]["step_seconds"]
               if k != "step_time_s") == pytest.approx(e["winner"]["step_seconds"]["step_time_s"])
    assert body["network"]["fabrics"]
    assert body["infeasible"] is None
    seed = body["seed_case"]
    assert (seed["claimed_hours"], seed["claimed_peak_fraction"]) == (41.0, 0.452)
    assert seed["model_hours"] != seed["claimed_hours"]
    assert seed["model_layout"].startswith("TP")
    # with Megatron's fp32 gradients the article's TP8 x DP32 needs more than 80 GB per GPU
    assert not seed["claimed_layout_fits"]
    assert "does not fit" in seed["claimed_layout_reason"]


def test_seed_cluster_256_h100_on_ndr400_is_computed_not_copied(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[32], fabrics=["InfiniBand NDR"],
                 oversubscription=[1], payments=["buy"])
    (o,) = body["options"]
    assert (o["gpus"], o["fabric"]) == (256, "InfiniBand NDR")
    # the article claims 41 h at 45.2% of peak; the model computes its own figures
    assert 5 < o["wall_hours"] < 48
    assert o["wall_hours"] != 41.0
    assert 0.2 < o["mfu"] < 1.5


def test_on_demand_cost_is_gpus_times_rate_times_hours(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[32], fabrics=["InfiniBand NDR"],
                 payments=["aws_on_demand"], mode="single_run", budget_usd_per_month=None,
                 deadline_hours=1000)
    (o,) = body["options"]
    assert o["fabric"] == "AWS EFA v2"
    # p5.48xlarge $55.04/h for 8 GPUs = $6.88 per GPU-hour, billed per second
    billed_h = math.ceil(o["wall_hours"] * 3600 - 1e-6) / 3600
    assert o["cost_usd"] == pytest.approx(256 * 6.88 * billed_h, rel=1e-9)


def test_infeasible_request_returns_closest_options_and_what_would_fix_it(
        client: TestClient) -> None:
    body = _plan(client, deadline_hours=2.0, gpu_types=["H100"], node_counts=[16, 32])
    assert body["feasible_count"] == 0
    assert body["options"] == []
    inf = body["infeasible"]
    assert inf["fastest_within_budget"] is not None
    assert inf["deadline_needed_hours"] == pytest.approx(
        inf["fastest_within_budget"]["wall_hours"])
    assert inf["deadline_needed_hours"] > 2.0
    assert inf["gpus_needed"] >= 256 * inf["deadline_needed_hours"] / 2.0 * 0.5
    assert "deadline" in inf["message"]
    assert body["frontier"]  # still something to look at


def test_infeasible_on_budget_says_the_budget_needed(client: TestClient) -> None:
    body = _plan(client, budget_usd=100.0, budget_usd_per_month=None, gpu_types=["H100"],
                 node_counts=[32])
    inf = body["infeasible"]
    assert inf["cheapest_meeting_deadline"] is not None
    assert inf["budget_needed_usd"] == pytest.approx(
        inf["cheapest_meeting_deadline"]["cost_usd"])
    assert inf["budget_needed_usd"] > 100.0


@pytest.mark.parametrize(("body", "field"), [
    ({"deadline_hours": -1}, "deadline_hours"),
    ({"gpu_types": ["H999"]}, "gpu_types"),
    ({"fabrics": ["Token Ring"]}, "fabrics"),
    ({"utilization": 1.5}, "utilization"),
    ({"node_counts": [0]}, "node_counts"),
    ({"model": "gpt-9"}, "model"),
    ({"payments": ["barter"]}, "payments.0"),
    ({"total_tokens": 0}, "total_tokens"),
    ({"surprise": 1}, "surprise"),
    ({"overrides": [{"payment": "aws_spot", "usd_per_gpu_hour": -2}]},
     "overrides.0.usd_per_gpu_hour"),
])
def test_bad_input_is_a_422_naming_the_field(client: TestClient, body: dict[str, Any],
                                             field: str) -> None:
    r = client.post("/api/v1/plan", json=body)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/problem+json")
    assert field in [e["field"] for e in r.json()["errors"]]


def test_a_payment_with_no_price_is_left_out_with_a_note(client: TestClient) -> None:
    base = {"gpu_types": ["H100"], "node_counts": [32], "fabrics": ["InfiniBand NDR"],
            "payments": ["aws_on_demand", "aws_spot"], "deadline_hours": 500,
            "budget_usd_per_month": None}
    body = _plan(client, **base)
    assert {o["payment"] for o in body["options"]} == {"aws_on_demand"}
    assert any(n.startswith("AWS spot for H100: no price") for n in body["notes"])
    # a request price brings spot in; interruptions lower its useful fraction
    priced = _plan(client, **base, overrides=[{"payment": "aws_spot", "gpu": "H100",
                                               "usd_per_gpu_hour": 2.0}])
    by = {o["payment"]: o for o in priced["options"]}
    assert by["aws_spot"]["useful_fraction"] < by["aws_on_demand"]["useful_fraction"]
    assert by["aws_spot"]["wall_hours"] > by["aws_on_demand"]["wall_hours"]


def test_only_unpriced_payments_is_a_422(client: TestClient) -> None:
    # No colocation rate is recorded before 2018-12-31 (pricing_data/prices_facility.csv).
    r = client.post("/api/v1/plan", json={"payments": ["colo"], "as_of": "2018-06-01"})
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "payments"


def test_planner_page_renders_the_seed_case(client: TestClient) -> None:
    r = client.get("/planner")
    assert r.status_code == 200
    assert '<a href="/planner">Planner</a>' in r.text
    assert "Feasible options, cheapest first" in r.text
    assert 'data-seed-check="1"' in r.text
    fig = _figure(r.text, "plan-chart")
    assert "hours" in fig["layout"]["xaxis"]["title"]["text"]
    assert "USD" in fig["layout"]["yaxis"]["title"]["text"]
    assert any(t["name"].startswith("Pareto frontier") for t in fig["data"])
    assert "cdn" not in r.text.lower()


def test_clicking_an_option_shows_its_breakdown_beside_the_winner(client: TestClient) -> None:
    page = client.get("/planner").text
    links = re.findall(r'hx-get="(/planner/option/\d+\?[^"]*)"', page)
    assert len(links) > 2
    detail = client.get(links[2].replace("&amp;", "&"), headers=HX)
    assert detail.status_code == 200
    assert "<html" not in detail.text
    assert "Step time" in detail.text
    assert "beside the winner" in detail.text
    # the breakdown chart: step-time parts on the left axis, cost parts on the right, one
    # bar per option (this one and the winner), each cost stack summing to the table's total
    fig = _figure(detail.text, "option-breakdown-chart")
    steps = [t for t in fig["data"] if t["xaxis"] == "x"]
    costs = [t for t in fig["data"] if t["xaxis"] == "x2"]
    assert {t["name"] for t in steps} >= {"Compute", "Data-parallel comm"}
    assert all(len(t["y"]) == 2 for t in fig["data"])
    totals = [float(x.replace(",", "")) for x in re.findall(
        r"<td>Total</td><td class=\"num\">\$([\d,]+)</td><td class=\"num\">\$([\d,]+)</td>",
        detail.text)[0]]
    for bar in (0, 1):
        assert sum(t["y"][bar] for t in costs) == pytest.approx(totals[bar], abs=1.0)
    assert "USD" in fig["layout"]["yaxis2"]["title"]["text"]
    assert "seconds" in fig["layout"]["yaxis"]["title"]["text"]
    # the page itself shows the winner beside the runner-up the same way
    why = _figure(page, "why-chart")
    assert len(why["data"][0]["y"]) == 2
    assert client.get("/planner/option/999999", headers=HX).status_code == 200  # htmx error


def test_planner_page_fragment_and_errors(client: TestClient) -> None:
    frag = client.get("/planner", params={"deadline_hours": "2"}, headers=HX)
    assert frag.status_code == 200
    assert "<html" not in frag.text
    assert 'data-infeasible="1"' in frag.text
    bad = client.get("/planner", params={"deadline_hours": "-4"})
    assert bad.status_code == 422
    assert "<b>deadline_hours</b>" in bad.text
    unchecked = client.get("/planner", params={"submitted": "1", "gpu_types": "H100"})
    assert unchecked.status_code == 422
    assert "<b>fabrics</b>" in unchecked.text


def test_clearing_the_monthly_budget_on_the_page_means_no_budget(client: TestClient) -> None:
    form = {"submitted": "1", "gpu_types": "H100", "fabrics": "InfiniBand NDR",
            "payments": "aws_on_demand", "node_counts": "32", "budget_usd_per_month": "",
            "as_of": AS_OF}
    page = client.get("/planner", params=form, headers=HX)
    assert page.status_code == 200
    assert "no budget" in page.text
    assert 'data-infeasible="1"' not in page.text


def test_a_gpu_cloud_priced_in_the_request_comes_with_its_own_fabric(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[32], oversubscription=[1, 2],
                 fabrics=["InfiniBand NDR", "RoCEv2 tuned"], payments=["gpu_cloud"],
                 budget_usd_per_month=None, mode="single_run",
                 overrides=[{"payment": "gpu_cloud", "gpu": "H100", "usd_per_gpu_hour": 2.5}])
    # the override prices every stored H100 on-demand provider (Nebius, Lambda, CoreWeave,
    # RunPod): one option each, all on NDR, non-blocking (not RoCE, not 2:1)
    opts = body["options"]
    assert sorted(o["payment"] for o in opts) == [
        "gpu_cloud:coreweave", "gpu_cloud:lambda", "gpu_cloud:nebius", "gpu_cloud:runpod"]
    for o in opts:
        assert (o["fabric"], o["oversubscription"]) == ("InfiniBand NDR", 1.0)
        assert "(request price)" in o["payment_label"]
        billed_h = math.ceil(o["wall_hours"] * 3600 - 1e-6) / 3600
        assert o["cost_usd"] == pytest.approx(256 * 2.5 * billed_h, rel=1e-9)


def test_gpu_clouds_are_priced_per_provider_from_the_store(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[32], oversubscription=[1],
                 fabrics=["InfiniBand NDR"], budget_usd_per_month=None, mode="single_run",
                 payments=["gpu_cloud", "gpu_cloud_committed", "gpu_cloud_spot"],
                 deadline_hours=1000)
    rate = {o["payment"]: o for o in body["options"]}
    # prices_gpu_cloud.csv: Nebius $2.95, CoreWeave $2.23 on-demand per GPU-hour
    od = rate["gpu_cloud:nebius"]
    billed_h = math.ceil(od["wall_hours"] * 3600 - 1e-6) / 3600
    assert od["cost_usd"] == pytest.approx(256 * 2.95 * billed_h, rel=1e-9)
    assert od["payment_label"] == "Nebius H100 on-demand"
    # CoreWeave committed: $1.79 for every hour of a 12-month term, one run pays it all
    cw = rate["gpu_cloud_committed:coreweave"]
    assert cw["payment_label"] == "CoreWeave H100 committed (12 mo)"
    # Lambda states no term: costed as a one-month commitment (as the TCO engine does)
    assert rate["gpu_cloud_committed:lambda"]["payment_label"].endswith("(1 mo, term not stated)")
    assert cw["cost_usd"] == pytest.approx(256 * 1.79 * 12 * 730, rel=1e-9)
    # Vast.ai spot $1.52 with reclaims: slower than the same cluster on demand
    spot = rate["gpu_cloud_spot:vastai"]
    assert spot["wall_hours"] > od["wall_hours"]
    assert spot["useful_fraction"] < od["useful_fraction"]


def test_aws_h200_and_b200_instances_are_priced_from_the_store(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H200", "B200"], node_counts=[32],
                 fabrics=["InfiniBand NDR"], budget_usd_per_month=None, mode="single_run",
                 deadline_hours=1000,
                 payments=["aws_on_demand", "aws_reserved_1y", "aws_capacity_block"])
    by = {(o["gpu"], o["payment"]): o for o in body["options"]}
    assert set(by) == {(g, p) for g in ("H200", "B200")
                       for p in ("aws_on_demand", "aws_reserved_1y", "aws_capacity_block")}
    od = by[("H200", "aws_on_demand")]
    assert od["fabric"] == "AWS EFA v3"
    assert "p5en.48xlarge" in od["payment_label"]
    assert by[("B200", "aws_on_demand")]["fabric"] == "AWS EFA v4"
    # p5en on-demand $63.296 per instance-hour / 8 GPUs, billed per second
    billed_h = math.ceil(od["wall_hours"] * 3600 - 1e-6) / 3600
    assert od["cost_usd"] == pytest.approx(256 * 63.296 / 8 * billed_h, rel=1e-9)
    # the reserved H200 rate is the store's estimate, and the label says so and which variant
    ri = by[("H200", "aws_reserved_1y")]
    assert "standard no upfront" in ri["payment_label"]
    assert "estimate" in ri["payment_label"]
    assert ri["cost_usd"] == pytest.approx(256 * 44.3072 / 8 * 12 * 730, rel=1e-9)


def test_savings_plans_need_a_request_price(client: TestClient) -> None:
    base = {"gpu_types": ["H100"], "node_counts": [32], "fabrics": ["InfiniBand NDR"],
            "payments": ["aws_on_demand", "aws_savings_plan_1y", "aws_savings_plan_3y"],
            "deadline_hours": 500, "budget_usd_per_month": None, "mode": "year_of_work",
            "utilization": 0.5}
    body = _plan(client, **base)
    assert {o["payment"] for o in body["options"]} == {"aws_on_demand"}
    assert sum("savings plan" in n and "left out" in n for n in body["notes"]) == 2
    priced = _plan(client, **base, overrides=[
        {"payment": "aws_savings_plan_3y", "gpu": "H100", "usd_per_gpu_hour": 3.0}])
    sp = next(o for o in priced["options"] if o["payment"] == "aws_savings_plan_3y")
    # a committed $/hour for the whole term, shared at 50% utilization:
    # 256 GPUs x $3.00 x 3 x 8,760 h x W / (0.5 x 26,280 h) = 256 x 3 x W / 0.5
    assert sp["fabric"] == "AWS EFA v2"
    assert sp["cost_usd"] == pytest.approx(256 * 3.0 * sp["wall_hours"] / 0.5, rel=1e-9)


def test_seed_case_check_places_the_article_cluster_in_the_plan(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[16, 32], fabrics=["InfiniBand NDR"],
                 oversubscription=[1], payments=["buy", "aws_on_demand"], deadline_hours=100,
                 budget_usd_per_month=None, mode="single_run")
    seed = body["seed_case"]
    ours = [o for o in body["options"] if o["gpus"] == 256 and o["fabric"] == "InfiniBand NDR"]
    best = min(ours, key=lambda o: o["cost_usd"])
    # the sentence quotes the plan's own cheapest way of paying for the article's cluster
    assert f"In this plan it is cheapest as {best['payment_label']}" in seed["sentence"]
    assert f"${best['cost_usd']:,.0f} per run" in seed["sentence"]
    assert f"rank {best['rank']} of {body['feasible_count']} feasible" in seed["sentence"]
    # fp8 run: MFU against the bf16 peak (989) restated against the fp8 peak (1,979)
    assert f"{seed['model_mfu'] * 989 / 1979:.1%} of the dense fp8 peak" in seed["sentence"]
    assert f"{seed['model_hours']:,.1f} h" in seed["sentence"]


def test_network_what_if_tests_the_seed_rules_on_its_own_numbers(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[32], oversubscription=[1],
                 fabrics=["InfiniBand NDR", "InfiniBand XDR", "RoCEv2 tuned", "RoCEv2 untuned"],
                 payments=["buy"], deadline_hours=500, budget_usd_per_month=None)
    net = body["network"]
    rows = {f["fabric"]: f for f in net["fabrics"]}
    ib_rule, xdr_rule = net["rules_of_thumb"]
    # gain = hours on the slower fabric / hours on the faster one - 1 (same tokens, same goodput)
    ib = rows["RoCEv2 tuned"]["wall_hours"] / rows["InfiniBand NDR"]["wall_hours"] - 1
    assert f"InfiniBand NDR {ib:+.1%} throughput over tuned RoCEv2" in ib_rule
    assert ("not supported" in ib_rule) == (ib < 0.10)  # the seed's claimed 10-15%
    assert "applies to this 91B model" in ib_rule  # seed-90b counts ~91B parameters
    xdr = rows["InfiniBand NDR"]["wall_hours"] / rows["InfiniBand XDR"]["wall_hours"] - 1
    assert f"is {xdr:+.1%} faster than NDR" in xdr_rule
    assert ("not needed" in xdr_rule) == (xdr < 0.05)
    # both RoCE and NDR have stored switch prices (SN5600 $45,000, QM9790 $40,000), so the
    # sentence answers "is InfiniBand worth it?" at those prices
    assert "At stored switch prices an InfiniBand NDR network costs" in net["sentence"]


def test_colocation_uses_the_stored_north_america_rate(client: TestClient) -> None:
    body = _plan(client, gpu_types=["H100"], node_counts=[32], fabrics=["InfiniBand NDR"],
                 oversubscription=[1], payments=["colo"], budget_usd_per_month=None,
                 deadline_hours=500)
    (o,) = body["options"]
    assert o["payment"] == "colo"
    used = {p["name"]: p["amount"] for p in body["prices_used"]}
    assert used["Colocation, North America primary markets (250-500 kW)"] == 184.06  # CBRE H2 2024
    detail = client.get(f"/planner/option/{o['id']}", params={
        "as_of": AS_OF, "gpu_types": "H100", "node_counts": "32", "fabrics": "InfiniBand NDR",
        "oversubscription": "1", "payments": "colo", "budget_usd_per_month": "",
        "submitted": "1", "deadline_hours": "500"}, headers=HX)
    assert detail.status_code == 200
    # held rate per GPU-hour: 10.2 kW per 8-GPU server = 1.275 kW per GPU x $184.06 / 730 h
    # = $0.32147, plus staff ($150,000 / 8,760 h / 256 GPUs = $0.06689) -> $0.388
    assert "<td class=\"num\">0.388</td>" in detail.text
