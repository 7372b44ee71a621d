"""Market observations (category `market_observation`, pricing_data/README.md): statistics over
several offers, e.g. "B200 spot (lowest seen, specialised clouds)". Listed by the price browser,
never priced as a way of paying by the TCO engine or the planner."""

import html
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import db, migrate
from app.planner.schemas import PlanRequest
from app.planner.service import _Prices as PlannerPrices
from app.planner.service import build_payments, make_plan
from app.pricing import repository
from app.pricing.models import (
    MARKET_OBSERVATION,
    PriceItem,
    PriceKind,
    PricePoint,
    PriceUnit,
    PurchaseOption,
    SourceKind,
)
from app.pricing.snapshot import load_snapshot, price_rows
from app.tco.schemas import TcoRequest
from app.tco.service import compute_tco

AS_OF = date(2026, 11, 30)
B200_SPOT = "B200 spot (lowest seen, specialised clouds)"
B200_SPOT_KEY = "gpu_cloud/specialised-clouds/global/B200/spot"  # before it was marked


def _record(session: Session, key: str, amount: str, **fields: object) -> PriceItem:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    src = repository.get_or_create_source(session, name="test quotes", kind=SourceKind.manual,
                                          retrieved_at=at)
    item = repository.get_or_create_item(session, key, **fields)
    repository.record_price(session, item, src, repository.NewPrice(Decimal(amount), at, at))
    return item


def _b200_spot_copy(session: Session, provider: str, category: str | None = None) -> None:
    """The snapshot's aggregate row again, under a provider's name: $2.25/GPU-h B200 spot."""
    _record(session, f"test/{provider}/B200/spot/{category}", "2.25", kind=PriceKind.gpu_cloud,
            name=f"{provider} B200 spot", unit=PriceUnit.usd_per_gpu_hour, provider=provider,
            region="global", gpu_model="B200", purchase_option=PurchaseOption.spot,
            category=category)


def _plan_request() -> PlanRequest:
    return PlanRequest(gpu_types=["B200"], payments=["gpu_cloud", "gpu_cloud_spot"],
                       as_of=AS_OF)


def test_the_snapshot_marks_its_aggregate_rows_and_says_so_in_the_note() -> None:
    marked = {row["name"]: row for _, _, row in price_rows()
              if row["category"] == MARKET_OBSERVATION}
    assert set(marked) == {B200_SPOT}
    assert marked[B200_SPOT]["provider"] == "specialised-clouds"
    for _, _, row in price_rows():  # the marker and the note's warning go together
        assert (row["category"] == MARKET_OBSERVATION) == \
            row["note"].startswith("MARKET OBSERVATION"), row["name"]


def test_tco_never_prices_an_option_from_a_market_observation(session: Session) -> None:
    load_snapshot(session)
    in_force = repository.prices_as_of(session, datetime(2026, 11, 30, 23, tzinfo=UTC),
                                       {"kind": PriceKind.gpu_cloud, "gpu_model": "B200"})
    assert B200_SPOT in {p.item.name for p in in_force}  # the row is there to be skipped
    req = TcoRequest(nodes=2, months=12, gpu_model="B200", as_of=AS_OF)
    result = compute_tco(session, req)
    keys = {o.key for o in result.options}
    assert {"gpu_cloud_runpod_on_demand", "gpu_cloud_spheron_on_demand"} <= keys
    assert [k for k in keys if k.startswith("gpu_cloud") and k.endswith("_spot")] == []
    assert B200_SPOT not in {u.name for u in result.prices_used}
    # The same figure offered by a named provider is an option (so the skip is the marker's
    # doing): 2 nodes × 8 GPUs × $2.25 × 8,760 h × 1.2 (spot re-work) = $378,432.
    _b200_spot_copy(session, "testcloud")
    totals = {o.key: o.total_usd for o in compute_tco(session, req).options}
    assert totals["gpu_cloud_testcloud_spot"] == pytest.approx(2 * 8 * 2.25 * 8_760 * 1.2)
    assert "gpu_cloud_specialised-clouds_spot" not in totals


def test_tco_skips_a_marked_aws_row(session: Session) -> None:
    # The snapshot has no p5 spot price: a marked "typical p5 spot" row must not fill the gap,
    # an unmarked one does (2 nodes × $0.50 × 8,760 h × 1.2 re-work = $10,512).
    load_snapshot(session)
    fields = {"kind": PriceKind.spot, "unit": PriceUnit.usd_per_hour, "provider": "aws",
              "region": "us-east-1", "gpu_model": "H100"}
    req = TcoRequest(nodes=2, months=12, as_of=AS_OF)
    _record(session, "test/aws/spot/typical", "0.5", name="p5 spot, typical", **fields,
            category=MARKET_OBSERVATION)
    assert "aws_spot" not in {o.key for o in compute_tco(session, req).options}
    _record(session, "test/aws/spot/offer", "0.5", name="p5 spot", **fields)
    totals = {o.key: o.total_usd for o in compute_tco(session, req).options}
    assert totals["aws_spot"] == pytest.approx(2 * 0.5 * 8_760 * 1.2)


def test_planner_never_pays_with_a_market_observation(session: Session) -> None:
    load_snapshot(session)
    terms, notes = build_payments(PlannerPrices(session, AS_OF), _plan_request())
    assert {t.key for t in terms} == {"gpu_cloud:runpod", "gpu_cloud:spheron"}
    assert any(n.startswith("GPU cloud spot for B200: no price") for n in notes)
    plan = make_plan(session, _plan_request())
    assert plan.options
    assert {o.payment for o in plan.options} <= {"gpu_cloud:runpod", "gpu_cloud:spheron"}
    assert B200_SPOT not in {u.name for u in plan.prices_used}
    # Offered by a named provider, the same $2.25 wins outright (less than half of RunPod's
    # $5.98 on-demand): what the aggregate row did before it was marked.
    _b200_spot_copy(session, "testcloud")
    assert make_plan(session, _plan_request()).options[0].payment == "gpu_cloud_spot:testcloud"


def test_planner_skips_a_marked_aws_row(session: Session) -> None:
    load_snapshot(session)
    fields = {"kind": PriceKind.spot, "unit": PriceUnit.usd_per_hour, "provider": "aws",
              "region": "us-east-1", "gpu_model": "H100", "instance_type": "p5.48xlarge",
              "gpu_count": 8}
    req = PlanRequest(gpu_types=["H100"], payments=["aws_spot"], as_of=AS_OF)
    _record(session, "test/aws/p5/spot/typical", "0.5", name="p5 spot, typical", **fields,
            category=MARKET_OBSERVATION)
    terms, _ = build_payments(PlannerPrices(session, AS_OF), req)
    assert terms == []
    _record(session, "test/aws/p5/spot/offer", "0.5", name="p5 spot", **fields)
    terms, _ = build_payments(PlannerPrices(session, AS_OF), req)
    assert [(t.key, t.usd_per_gpu_hour) for t in terms] == [("aws_spot", 0.5 / 8)]


def test_the_price_browser_still_lists_it(client: TestClient) -> None:
    r = client.get("/api/v1/prices", params={"kind": "gpu_cloud", "gpu_model": "B200",
                                             "purchase_option": "spot", "as_of": "2026-11-30"})
    assert r.status_code == 200
    rows = [i for i in r.json()["items"] if i["name"] == B200_SPOT]
    assert [(i["amount"], i["category"], i["provider"]) for i in rows] == [
        (2.25, MARKET_OBSERVATION, "specialised-clouds")]
    page = client.get("/prices", params={"kind": "gpu_cloud", "gpu_model": "B200"})
    assert page.status_code == 200
    assert html.escape(B200_SPOT) in page.text
    assert MARKET_OBSERVATION in page.text


def _old_snapshot_row(url: str) -> None:
    """The row as a store at revision 0007 holds it after loading the earlier snapshot."""
    with db.session_scope(url) as s, s.begin():
        _record(s, B200_SPOT_KEY, "2.25", kind=PriceKind.gpu_cloud, name=B200_SPOT,
                unit=PriceUnit.usd_per_gpu_hour, provider="specialised-clouds",
                region="global", gpu_model="B200", purchase_option=PurchaseOption.spot)


def _b200_spot_items(url: str) -> list[tuple[str, str | None, int]]:
    with db.session_scope(url) as s:
        items = s.scalars(select(PriceItem).where(PriceItem.name == B200_SPOT)
                          .order_by(PriceItem.item_key))
        return [(i.item_key, i.category, len(list(s.scalars(
            select(PricePoint).where(PricePoint.item_id == i.id))))) for i in items]


def test_migration_marks_a_store_loaded_before(scratch_url: str) -> None:
    migrate.upgrade(scratch_url, "0007")
    _old_snapshot_row(scratch_url)
    migrate.upgrade(scratch_url)
    new_key = f"{B200_SPOT_KEY}/{MARKET_OBSERVATION}"
    assert _b200_spot_items(scratch_url) == [(new_key, MARKET_OBSERVATION, 1)]
    with db.session_scope(scratch_url) as s, s.begin():
        load_snapshot(s)  # the snapshot's row lands on the moved item: no twin, no new point
    assert _b200_spot_items(scratch_url) == [(new_key, MARKET_OBSERVATION, 1)]
    migrate.downgrade(scratch_url, "0007")
    assert _b200_spot_items(scratch_url) == [(B200_SPOT_KEY, None, 1)]


def test_migration_marks_the_old_item_when_the_new_one_exists(scratch_url: str) -> None:
    # `prices load` run before `db upgrade`: both items exist; the old one keeps its key (the
    # new one has it) but is marked, so neither becomes an option.
    migrate.upgrade(scratch_url, "0007")
    _old_snapshot_row(scratch_url)
    with db.session_scope(scratch_url) as s, s.begin():
        load_snapshot(s)
    migrate.upgrade(scratch_url)
    assert _b200_spot_items(scratch_url) == [
        (B200_SPOT_KEY, MARKET_OBSERVATION, 1),
        (f"{B200_SPOT_KEY}/{MARKET_OBSERVATION}", MARKET_OBSERVATION, 1)]
