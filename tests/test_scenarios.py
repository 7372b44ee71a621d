"""Saved scenarios: API, pages, exports, pinned prices, examples, escaping."""

import csv
import html
import io
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient
from openpyxl import load_workbook
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.pricing.models import PriceItem, PriceSource
from app.pricing.repository import NewPrice, record_price
from app.pricing.snapshot import load_snapshot
from app.scenarios import schemas, service
from app.scenarios.examples import EXAMPLES
from app.scenarios.models import Scenario
from app.scenarios.schemas import ScenarioCreate, ScenarioFork
from app.tco.schemas import TcoRequest, TcoResponse
from app.tco.service import compute_tco

RESERVED = "AWS reserved 1y partial upfront"
SEED_24X7: dict[str, Any] = {"nodes": 8, "months": 24, "utilization": 1.0, "gpu_model": "H100",
             "as_of": "2026-11-30"}


def _create(client: TestClient, name: str = "test", **inputs: object) -> dict[str, object]:
    r = client.post("/api/v1/scenarios", json={"name": name, "inputs": inputs})
    assert r.status_code == 201, r.text
    body: dict[str, object] = r.json()
    return body


def _totals(html: str) -> list[float]:
    return [float(x) for x in re.findall(r'data-total="([0-9.]+)"', html)]


def test_create_and_get_returns_hand_computed_totals(client: TestClient) -> None:
    body = _create(client, "seed 24/7", **SEED_24X7)
    share_id = str(body["share_id"])
    assert len(share_id) == 22  # token_urlsafe(16): 16 bytes = 128 bits, base64url
    got = client.get(f"/api/v1/scenarios/{share_id}").json()
    totals = {o["key"]: o["total_usd"] for o in got["result"]["options"]}
    assert totals["aws_reserved_1y_partial_upfront"] == pytest.approx(8 * 19.50 * 17_520)
    assert got["as_of"] == "2026-11-30"
    assert got["links"]["page"] == f"/s/{share_id}"


def test_blank_as_of_is_pinned_to_today(client: TestClient) -> None:
    body = _create(client, nodes=1)
    today = datetime.now(UTC).date().isoformat()
    assert body["as_of"] == today
    assert body["inputs"]["as_of"] == today  # type: ignore[index]


def test_share_ids_differ_and_unknown_is_404(client: TestClient) -> None:
    ids = {_create(client, nodes=1, as_of="2026-11-30")["share_id"] for _ in range(5)}
    assert len(ids) == 5
    r = client.get("/api/v1/scenarios/doesNotExist123")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("application/problem+json")
    for bad in ("doesNotExist123", "%3Cscript%3E", "x" * 500):
        page = client.get(f"/s/{bad}")
        assert page.status_code == 404
        assert "No scenario at this link" in page.text
        assert "<script>" not in page.text


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "", "inputs": {}}, "name"),
    ({"name": "x", "inputs": {"nodes": 0}}, "inputs.nodes"),
    ({"name": "x", "inputs": {"utilization": 1.5}}, "inputs.utilization"),
    ({"name": "x", "kind": "poem"}, "kind"),
    ({"name": "x", "extra": 1}, "extra"),
])
def test_create_rejects_bad_input_naming_the_field(client: TestClient, body: dict[str, object],
                                                   field: str) -> None:
    r = client.post("/api/v1/scenarios", json=body)
    assert r.status_code == 422
    assert field in [e["field"] for e in r.json()["errors"]]


def test_saved_scenarios_are_immutable(client: TestClient) -> None:
    share_id = _create(client, nodes=1, as_of="2026-11-30")["share_id"]
    assert client.put(f"/api/v1/scenarios/{share_id}", json={}).status_code == 405
    assert client.delete(f"/api/v1/scenarios/{share_id}").status_code == 405


def test_fork_copies_and_changes_without_touching_the_original(client: TestClient) -> None:
    original = _create(client, "base", **SEED_24X7)
    r = client.post(f"/api/v1/scenarios/{original['share_id']}/fork",
                    json={"inputs": {"utilization": 0.5}})
    assert r.status_code == 201
    fork = r.json()
    assert fork["forked_from"] == original["share_id"]
    assert fork["name"] == "base (fork)"
    assert fork["inputs"]["utilization"] == 0.5
    assert fork["inputs"]["nodes"] == 8
    again = client.get(f"/api/v1/scenarios/{original['share_id']}").json()
    assert again["inputs"]["utilization"] == 1.0
    bad = client.post(f"/api/v1/scenarios/{original['share_id']}/fork",
                      json={"inputs": {"nodes": -1}})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "inputs.nodes"


def test_pinned_date_keeps_numbers_after_prices_are_refreshed(session: Session) -> None:
    load_snapshot(session)
    saved = service.save(session, ScenarioCreate(name="pin", inputs=TcoRequest(nodes=8)),
                         today=date(2026, 11, 30))
    before = service.compute(session, saved)
    # A refresh lands: p5 on-demand drops to $40/h from 2026-12-15.
    item = session.scalar(select(PriceItem).where(PriceItem.name == "p5.48xlarge on-demand",
                                                  PriceItem.region == "us-east-1"))
    source = session.scalar(select(PriceSource).where(PriceSource.name.like("AWS EC2 price%")))
    assert item is not None
    assert source is not None
    when = datetime(2026, 12, 15, tzinfo=UTC)
    record_price(session, item, source, NewPrice(Decimal("40"), when, when))
    session.flush()
    after = service.compute(session, service.get(session, saved.share_id))
    assert after.model_dump() == before.model_dump()
    later = service.compute(session, service.save(session, ScenarioCreate(
        name="later", inputs=TcoRequest(nodes=8)), today=date(2026, 12, 20)))
    assert isinstance(later, TcoResponse)
    od = {o.key: o.total_usd for o in later.options}["aws_on_demand"]
    assert od == pytest.approx(8 * 40 * 17_520)  # the refreshed price, 8 nodes × $40 × 17,520 h


def test_a_backfilled_price_does_not_change_a_saved_link(session: Session) -> None:
    """A price learnt after saving, even one effective before the pinned date, is not used for
    the saved scenario (it reads prices as known when saved); a live workspace uses it."""
    load_snapshot(session)
    saved = service.save(session, ScenarioCreate(name="pin", inputs=TcoRequest(nodes=8)),
                         today=date(2026, 11, 30))
    before = service.compute(session, saved)
    item = session.scalar(select(PriceItem).where(PriceItem.name == "p5.48xlarge on-demand",
                                                  PriceItem.region == "us-east-1"))
    source = session.scalar(select(PriceSource).where(PriceSource.name.like("AWS EC2 price%")))
    assert item is not None
    assert source is not None
    # A correction learnt today: p5 on-demand was $50/h from 2026-11-01 (before the pin).
    when = datetime(2026, 11, 1, tzinfo=UTC)
    assert record_price(session, item, source, NewPrice(Decimal("50"), when, when)) is not None
    session.flush()
    assert service.compute(session, service.get(session, saved.share_id)) == before
    live = compute_tco(session, TcoRequest(nodes=8, as_of=date(2026, 11, 30)))
    od = {o.key: o.total_usd for o in live.options}["aws_on_demand"]
    assert od == pytest.approx(8 * 50 * 17_520)  # 8 nodes × $50 × 17,520 h


def test_examples_are_seeded_once_with_stable_ids(app_session: Session) -> None:
    assert service.seed_examples(app_session) == 0  # the app seeded them at start-up
    ids = [s.share_id for _, s in service.examples(app_session)]
    assert ids == [e.share_id for e in EXAMPLES]
    count = len(list(app_session.scalars(select(Scenario).where(Scenario.share_id.in_(ids)))))
    assert count == len(EXAMPLES)


def test_every_example_computes(client: TestClient) -> None:
    for ex in EXAMPLES:
        r = client.get(f"/api/v1/scenarios/{ex.share_id}")
        assert r.status_code == 200, r.text
        assert r.json()["kind"] == ex.kind
        pinned = getattr(ex.inputs, "as_of", None)
        if pinned is not None:  # priced kinds keep their price date
            assert r.json()["as_of"] == pinned.isoformat()
        page = client.get(f"/s/{ex.share_id}")
        assert page.status_code == 200, ex.share_id
        assert ex.claim.split(":")[0] in html.unescape(page.text)


def test_gallery_has_every_seed_case_of_every_kind() -> None:
    kinds = {ex.kind for ex in EXAMPLES}
    assert kinds == {"tco", "throughput", "plan", "kv_cache"}
    ids = [ex.share_id for ex in EXAMPLES]
    assert len(ids) == len(set(ids))
    # The cloud-vs-colo examples are the TCO engine's own requests, not restated copies.
    from app.tco.examples import EXAMPLES as TCO
    by_id = {ex.share_id: ex for ex in EXAMPLES}
    assert by_id["example-seed001-512xb200-cloud-vs-colo"].inputs is \
        TCO["seed001-512xb200-cloud-vs-colo"].request


def test_kv_example_matches_the_hand_computed_cache(client: TestClient) -> None:
    out = client.get("/api/v1/scenarios/example-seed000-1m-context-kv").json()["result"]
    # Llama 2 7B: 2 (K and V) × 32 layers × 32 KV heads × 128 head size × 2 bytes = 524,288 B
    # per token; × 1,048,576 tokens = 549,755,813,888 B (the article says ~120 GB).
    assert out["kv_bytes_per_token"] == pytest.approx(2 * 32 * 32 * 128 * 2)
    assert out["kv_bytes"] == pytest.approx(2 * 32 * 32 * 128 * 2 * 1_048_576)


def test_throughput_save_and_share_shows_the_same_numbers(client: TestClient) -> None:
    params = {"preset": "llama3-70b", "gpu": "H100 SXM 80GB", "nodes": "4",
              "scale_out_fabric": "RoCEv2 untuned"}
    live = client.get("/throughput", params=params).text
    r = client.post("/s", data={**params, "kind": "throughput", "name": "rocev2"},
                    follow_redirects=False)
    assert r.status_code == 303
    shared = client.get(r.headers["location"])
    assert shared.status_code == 200
    tokens = re.compile(r'data-tokens-per-day="([0-9]+)"')
    assert tokens.findall(shared.text) == tokens.findall(live)[:1]
    api = client.get("/api/v1/scenarios/" + r.headers["location"].rsplit("/", 1)[1]).json()
    assert api["kind"] == "throughput"
    assert api["inputs"]["scale_out_fabric"] == "RoCEv2 untuned"
    fork = re.search(r'href="(/throughput\?[^"]+)"', shared.text)
    assert fork is not None
    assert "RoCEv2+untuned" in fork.group(1)
    assert client.get(f"/s/{api['share_id']}/export.csv").status_code == 422  # no cost table


def test_plan_save_and_share_pins_prices(client: TestClient) -> None:
    r = client.post("/s", data={"kind": "plan", "submitted": "1", "model": "seed-90b",
                                "deadline_hours": "48", "gpu_types": "H100",
                                "node_counts": "32", "payments": "aws_on_demand",
                                "fabrics": "InfiniBand NDR", "oversubscription": "1",
                                "as_of": "2026-11-30"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    api = client.get("/api/v1/scenarios/" + r.headers["location"].rsplit("/", 1)[1]).json()
    assert api["kind"] == "plan"
    assert api["as_of"] == "2026-11-30"
    assert api["inputs"]["node_counts"] == [32]
    page = client.get(r.headers["location"])
    assert page.status_code == 200
    assert "/planner?submitted=1" in html.unescape(page.text)


def test_bad_plan_form_is_refused_naming_the_field(client: TestClient) -> None:
    r = client.post("/s", data={"kind": "plan", "model": "no-such-model"})
    assert r.status_code == 422
    assert "model" in r.text


def test_inputs_must_match_the_kind(client: TestClient) -> None:
    r = client.post("/api/v1/scenarios", json={"name": "x", "kind": "kv_cache",
                                               "inputs": {"context_tokens": 0}})
    assert r.status_code == 422
    assert "inputs.context_tokens" in r.text


def test_home_page_links_the_examples(client: TestClient) -> None:
    page = client.get("/").text
    for ex in EXAMPLES:
        assert f'href="/s/{ex.share_id}"' in page


def test_save_form_redirects_to_a_page_with_the_same_numbers(client: TestClient) -> None:
    form = {"nodes": "8", "gpu_model": "H100", "months": "24", "utilization": "0.5",
            "region": "us-east-1", "as_of": "2026-11-30", "name": "Board deck"}
    r = client.post("/s", data=form, follow_redirects=False)
    assert r.status_code == 303
    shared = client.get(r.headers["location"])
    assert shared.status_code == 200
    assert "Board deck" in shared.text
    live = client.get("/", params={k: v for k, v in form.items() if k != "name"})
    assert _totals(shared.text) == _totals(live.text)
    assert len(_totals(shared.text)) >= 3  # one card per priced option


def test_save_form_with_bad_input_rerenders_with_inline_error(client: TestClient) -> None:
    r = client.post("/s", data={"nodes": "0", "name": "x"}, follow_redirects=False)
    assert r.status_code == 422
    assert 'id="err-nodes"' in r.text
    assert "greater than or equal to 1" in r.text


def test_script_in_name_is_escaped(client: TestClient) -> None:
    evil = "<script>alert(1)</script>"
    share_id = _create(client, evil, nodes=1, as_of="2026-11-30")["share_id"]
    page = client.get(f"/s/{share_id}").text
    assert evil not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_fork_button_prefills_the_workspace(client: TestClient) -> None:
    share_id = _create(client, **SEED_24X7)["share_id"]
    page = client.get(f"/s/{share_id}").text
    fork = re.search(r'href="(/\?[^"]+)">Fork', page)
    assert fork is not None
    url = fork.group(1).replace("&amp;", "&")
    assert "nodes=8" in url
    assert "as_of=2026-11-30" in url
    assert _totals(client.get(url).text) == _totals(page)


def _csv_sections(text: str) -> dict[str, list[list[str]]]:
    sections: dict[str, list[list[str]]] = {}
    current: list[list[str]] = []
    for row in csv.reader(io.StringIO(text)):
        if row and row[0].startswith("# "):
            current = sections.setdefault(row[0][2:], [])
        elif row:
            current.append(row)
    return sections


def test_csv_export_has_comparison_flows_inputs_and_sources(client: TestClient) -> None:
    share_id = _create(client, "csv", **SEED_24X7)["share_id"]
    for url in (f"/s/{share_id}/export.csv", f"/api/v1/scenarios/{share_id}/export.csv"):
        r = client.get(url)
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/csv")
        assert "attachment" in r.headers["content-disposition"]
        sections = _csv_sections(r.text)
        comparison = {row[0]: row for row in sections["Comparison"][1:]}
        head = sections["Comparison"][0]
        assert float(comparison[RESERVED][1]) == pytest.approx(2_733_120)
        # $/used GPU-hour: 2,733,120 / (64 GPUs × 17,520 h) = $2.4375
        per_hour = head.index("Per used GPU-hour (USD)")
        assert float(comparison[RESERVED][per_hour]) == pytest.approx(2.4375)
        flows = sections["Monthly cash flows (USD, cash out positive)"]
        assert len(flows) == 1 + 24  # header + 24 months
        header = flows[0]
        cumulative = header.index(f"{RESERVED} cumulative (USD)")
        assert float(flows[-1][cumulative]) == pytest.approx(2_733_120)
        inputs = {row[0]: row[1] for row in sections["Inputs"]}
        assert inputs["Prices as of"] == "2026-11-30"
        assert inputs["Link"] == f"http://testserver/s/{share_id}"  # absolute: works when pasted
        assert all(row[3] for row in sections["Prices used"][1:])  # every price has a source


def test_xlsx_export_has_three_sheets(client: TestClient) -> None:
    share_id = _create(client, "xlsx", **SEED_24X7)["share_id"]
    r = client.get(f"/s/{share_id}/export.xlsx")
    assert r.status_code == 200
    wb = load_workbook(io.BytesIO(r.content))
    assert wb.sheetnames == ["Comparison", "Monthly cash flows", "Inputs & sources"]
    rows = {row[0]: row for row in wb["Comparison"].iter_rows(min_row=5, values_only=True)}
    assert rows[RESERVED][1] == pytest.approx(2_733_120)
    assert wb["Monthly cash flows"].max_row == 1 + 24
    sources = [row for row in wb["Inputs & sources"].iter_rows(values_only=True) if row[0]]
    assert ("Prices as of", "2026-11-30") in [(r[0], r[1]) for r in sources]


def test_workspace_export_uses_the_query_string(client: TestClient) -> None:
    r = client.get("/export.csv", params={**SEED_24X7, "utilization": "0.5"})
    assert r.status_code == 200
    comparison = {row[0]: row for row in _csv_sections(r.text)["Comparison"][1:]}
    # on-demand billed per hour used: 8 × $55.04 × 0.5 × 17,520 h = $3,857,203.20
    assert float(comparison["AWS on-demand"][1]) == pytest.approx(3_857_203.20)
    assert client.get("/export.xlsx", params=SEED_24X7).status_code == 200
    bad = client.get("/export.csv", params={"nodes": "-1"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "nodes"


def test_methodology_page_has_every_anchor_the_results_link_to(client: TestClient) -> None:
    page = client.get("/methodology").text
    results = client.get("/", params=SEED_24X7).text
    anchors = set(re.findall(r'href="/methodology#([a-z-]+)"', results))
    assert anchors >= {"gpu-hour-used", "total", "cash-flows", "as-of", "utilization"}
    for other in ("/throughput", "/s/example-seed000-1m-context-kv",
                  "/s/example-seed001-256gpu-48h-plan"):  # the other pages link to it too
        anchors |= set(re.findall(r'href="/methodology#([a-z-]+)"', client.get(other).text))
    assert anchors >= {"flops-mfu", "memory", "collectives", "failures", "kv-cache", "planner"}
    for anchor in anchors:
        assert f'id="{anchor}"' in page, anchor
    assert "2,733,120" in page  # the worked example: 8 × $19.50 × 17,520 h


def test_fork_service_keeps_name_and_pins(session: Session) -> None:
    load_snapshot(session)
    base = service.save(session, ScenarioCreate(name="b", inputs=TcoRequest(nodes=2)),
                        today=date(2026, 11, 30))
    child = service.fork(session, base.share_id, ScenarioFork(name="c"))
    assert child.as_of == date(2026, 11, 30)  # the original's pin carries over
    assert child.forked_from is base


def test_old_payload_versions_are_upgraded_on_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pretend the TCO inputs are at v2, where v1's "gpus" became "nodes" (8 GPUs each).
    monkeypatch.setitem(schemas.INPUT_MODELS, "tco",
                        schemas.INPUT_MODELS["tco"].model_copy(update={"version": 2}))

    def v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in payload.items() if k != "gpus"}, "nodes": payload["gpus"] // 8}

    monkeypatch.setitem(schemas.UPGRADERS, ("tco", 1), v1_to_v2)
    old = Scenario(share_id="old", name="old", kind="tco", schema_version=1,
                   inputs={"gpus": 64, "as_of": "2026-11-30"}, as_of=date(2026, 11, 30))
    upgraded = service.inputs_of(old)
    assert isinstance(upgraded, TcoRequest)
    assert upgraded.nodes == 8


def test_payload_the_model_rejects_is_a_conflict_not_a_crash() -> None:
    broken = Scenario(share_id="b", name="b", kind="tco", schema_version=1,
                      inputs={"nodes": 8, "gone": 1}, as_of=date(2026, 11, 30))
    with pytest.raises(Conflict, match="gone"):
        service.inputs_of(broken)


def test_openapi_lists_the_scenario_endpoints(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/v1/scenarios", "/api/v1/scenarios/{share_id}",
            "/api/v1/scenarios/{share_id}/fork", "/api/v1/scenarios/{share_id}/export.csv",
            "/api/v1/scenarios/{share_id}/export.xlsx"} <= set(paths)
    assert "/s/{share_id}" not in paths  # pages stay out of the API schema


def test_saving_without_prices_for_the_date_is_refused_and_leaves_no_row(
        client: TestClient, app_session: Session) -> None:
    # No H100 price of any kind is recorded before p5's launch on 2023-07-26.
    r = client.post("/api/v1/scenarios",
                    json={"name": "too-early", "inputs": {"as_of": "2020-01-01"}})
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "gpu_model"
    assert app_session.scalar(select(Scenario).where(Scenario.name == "too-early")) is None
