"""Pricing store: history resolution, idempotent snapshot, sourced rows."""

import csv
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.errors import Conflict
from app.pricing import repository
from app.pricing.models import PriceKind, PricePoint, PriceUnit, SourceKind
from app.pricing.snapshot import SNAPSHOT_DIR, load_snapshot, price_rows


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _p5_on_demand(session: Session, when: str) -> Decimal:
    points = repository.prices_as_of(session, _at(when), {
        "kind": PriceKind.cloud_instance, "instance_type": "p5.48xlarge",
        "purchase_option": "on_demand", "region": "us-east-1"})
    assert len(points) == 1, "as-of must resolve to exactly one price per item"
    return points[0].amount


def test_as_of_resolves_before_and_after_a_recorded_change(session: Session) -> None:
    load_snapshot(session)
    assert _p5_on_demand(session, "2024-06-01") == Decimal("98.32")
    assert _p5_on_demand(session, "2025-05-31") == Decimal("98.32")
    assert _p5_on_demand(session, "2025-06-01") == Decimal("55.04")
    assert repository.prices_as_of(session, _at("2023-01-01"),
                                   {"instance_type": "p5.48xlarge"}) == []


def test_snapshot_load_is_idempotent(session: Session) -> None:
    load_snapshot(session)
    before = session.scalar(select(func.count()).select_from(PricePoint))
    report = load_snapshot(session)
    assert report.points_added == 0
    assert session.scalar(select(func.count()).select_from(PricePoint)) == before


def test_history_is_appended_and_never_rewritten(session: Session) -> None:
    src = repository.get_or_create_source(session, name="test quote", kind=SourceKind.manual,
                                          retrieved_at=_at("2026-01-01"))
    item = repository.get_or_create_item(session, "equipment/test/widget", kind=PriceKind.equipment,
                                         name="widget", unit=PriceUnit.usd_each)
    first = repository.NewPrice(Decimal(100), _at("2026-01-01"), _at("2026-01-01"))
    second = repository.NewPrice(Decimal(90), _at("2026-06-01"), _at("2026-06-01"))
    backfill = repository.NewPrice(Decimal(95), _at("2026-03-01"), _at("2026-06-01"))
    assert repository.record_price(session, item, src, first) is not None
    assert repository.record_price(session, item, src, second) is not None
    assert repository.record_price(session, item, src, backfill) is not None
    assert repository.record_price(session, item, src, second) is None  # unchanged: nothing added


    rows = repository.prices_as_of(session, _at("2026-02-01"), {"kind": PriceKind.equipment})
    assert [r.amount for r in rows if r.item_id == item.id] == [Decimal(100)]
    rows = repository.prices_as_of(session, _at("2026-04-01"), {"kind": PriceKind.equipment})
    assert [r.amount for r in rows if r.item_id == item.id] == [Decimal(95)]
    rows = repository.prices_as_of(session, _at("2026-07-01"), {"kind": PriceKind.equipment})
    assert [r.amount for r in rows if r.item_id == item.id] == [Decimal(90)]
    with pytest.raises(Conflict):
        repository.record_price(session, item, src, repository.NewPrice(
            Decimal(1), _at("2026-06-01"), _at("2026-06-01")))


def test_every_snapshot_row_names_a_source_and_a_date() -> None:
    with (SNAPSHOT_DIR / "sources.csv").open(newline="") as fh:
        sources = {row["source"]: row for row in csv.DictReader(fh)}
    for key, src in sources.items():
        assert src["name"].strip(), f"source {key}: no name"
        assert datetime.fromisoformat(src["retrieved_at"].replace("Z", "+00:00")), key
        assert src["url"].strip() or src["kind"] == "manual", f"source {key}: no URL"
    rows = list(price_rows())
    assert len(rows) >= 90  # guards against a truncated snapshot
    for path, n, row in rows:
        where = f"{path.name} line {n}"
        assert row["source"] in sources, f"{where}: unknown source {row['source']!r}"
        assert row["effective_from"].strip(), f"{where}: no date"
        assert datetime.fromisoformat(row["effective_from"].replace("Z", "+00:00")), where
        assert Decimal(row["amount"]) >= 0, where
        if row["low"] or row["high"]:  # a range: the default must lie inside it
            assert Decimal(row["low"]) <= Decimal(row["amount"]) <= Decimal(row["high"]), where


# The filters app/tco/service.py resolves with `require_price` (which takes the first match):
# each must match exactly one item, or adding a snapshot row would silently change the TCO.
TCO_BINDINGS = [
    *({"kind": PriceKind.equipment, "category": "gpu", "gpu_model": g} for g in ("H100", "H200",
                                                                                  "B200")),
    {"kind": PriceKind.equipment, "category": "server", "gpu_count": 8},
    {"kind": PriceKind.equipment, "category": "ib_switch"},
    {"kind": PriceKind.equipment, "category": "node_network_kit"},
    {"kind": PriceKind.facility, "category": "idle_power_fraction"},
    {"kind": PriceKind.facility, "category": "pue"},
    {"kind": PriceKind.electricity, "region": "us"},
    {"kind": PriceKind.staff, "region": "us"},
    *({"kind": PriceKind.cloud_instance, "provider": "aws", "region": "us-east-1",
       "gpu_model": g, "purchase_option": "on_demand"} for g in ("H100", "H200", "B200")),
    *({"kind": PriceKind.cloud_instance, "provider": "aws", "region": "us-east-1",
       "gpu_model": g, "purchase_option": "reserved", "term_months": 12}
      for g in ("H100", "H200", "B200")),
]


@pytest.mark.parametrize("filters", TCO_BINDINGS)
def test_each_tco_binding_resolves_to_exactly_one_snapshot_item(
        session: Session, filters: dict[str, object]) -> None:
    load_snapshot(session)
    points = repository.prices_as_of(session, _at("2026-11-30"), filters)
    assert len(points) == 1, [p.item.item_key for p in points]
