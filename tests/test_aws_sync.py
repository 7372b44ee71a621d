"""AWS refresh over botocore's Stubber with recorded response shapes (tests/data/aws/).

moto implements neither the Price List, Savings Plans nor Capacity Block APIs, hence Stubber."""

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import cli, db
from app.pricing import aws_sync, repository
from app.pricing.models import (
    PriceItem,
    PriceKind,
    PricePoint,
    PriceSource,
    PurchaseOption,
    SourceKind,
)
from app.pricing.snapshot import load_snapshot
from app.settings import get_settings

DATA = Path(__file__).parent / "data" / "aws"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
P5 = "p5.48xlarge"
DATE_KEYS = {"Timestamp", "StartDate", "EndDate"}


def _load(name: str) -> dict[str, Any]:
    def dates(obj: dict[str, Any]) -> dict[str, Any]:
        return {k: datetime.fromisoformat(v) if k in DATE_KEYS else v for k, v in obj.items()}
    return dict(json.loads((DATA / name).read_text(), object_hook=dates))


class Stubs:
    """Three stubbed clients; responses are queued in the order the sync calls them."""

    def __init__(self) -> None:
        kw: dict[str, Any] = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
        self.clients = aws_sync.AwsClients(
            pricing=boto3.client("pricing", region_name="us-east-1", **kw),
            ec2=boto3.client("ec2", region_name="us-east-1", **kw),
            savingsplans=boto3.client("savingsplans", region_name="us-east-1", **kw))
        self.pricing = Stubber(self.clients.pricing)
        self.ec2 = Stubber(self.clients.ec2)
        self.sp = Stubber(self.clients.savingsplans)

    def queue_p5(self, *, spot_error: bool = False, no_blocks: bool = False) -> None:
        expected = {"ServiceCode": "AmazonEC2", "FormatVersion": "aws_v1", "MaxResults": 100,
                    "Filters": ANY}
        self.pricing.add_response("get_products", _load("get_products_p5_page1.json"), expected)
        self.pricing.add_response("get_products", _load("get_products_p5_page2.json"),
                                  {**expected, "NextToken": "eyJwYWdlIjogMn0="})
        if spot_error:
            self.ec2.add_client_error("describe_spot_price_history", "RequestLimitExceeded",
                                      "Request limit exceeded.", http_status_code=503)
            return
        self.ec2.add_response("describe_spot_price_history", _load("spot_p5_page1.json"))
        self.ec2.add_response("describe_spot_price_history", _load("spot_p5_page2.json"))
        self.sp.add_response("describe_savings_plans_offering_rates",
                             _load("savings_plans_p5.json"))
        if no_blocks:
            self.ec2.add_client_error("describe_capacity_block_offerings",
                                      "InvalidParameterValue",
                                      "The instance type is not supported for Capacity Blocks.")
            return
        self.ec2.add_response("describe_capacity_block_offerings",
                              _load("capacity_blocks_p5.json"))

    def __enter__(self) -> "Stubs":
        for s in (self.pricing, self.ec2, self.sp):
            s.activate()
        return self

    def __exit__(self, *exc: object) -> None:
        for s in (self.pricing, self.ec2, self.sp):
            s.deactivate()


def _sync(session: Session, stubs: Stubs, instance_types: tuple[str, ...] = (P5,),
          now: datetime = NOW) -> aws_sync.SyncReport:
    return aws_sync.sync_aws(session, stubs.clients, "us-east-1", instance_types, now=now,
                             progress_stream=StringIO())


def _count(session: Session) -> tuple[int | None, ...]:
    return tuple(session.scalar(select(func.count()).select_from(t))
                 for t in (PricePoint, PriceItem, PriceSource))


def _points(session: Session, **filters: object) -> list[PricePoint]:
    return repository.prices_as_of(session, NOW, {"provider": "aws", **filters})


def test_request_filters_select_linux_shared_on_demand() -> None:
    stubs = Stubs()
    filters = [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in [
        ("instanceType", P5), ("regionCode", "us-east-1"), ("operatingSystem", "Linux"),
        ("tenancy", "Shared"), ("preInstalledSw", "NA"), ("capacitystatus", "Used"),
        ("marketoption", "OnDemand"), ("licenseModel", "No License required")]]
    stubs.pricing.add_response("get_products", _load("get_products_p5_page1.json"), {
        "ServiceCode": "AmazonEC2", "FormatVersion": "aws_v1", "MaxResults": 100,
        "Filters": filters})
    stubs.pricing.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []})
    with stubs:
        items = list(aws_sync.fetch_products(stubs.clients.pricing, "us-east-1", P5))
    assert [i["product"]["sku"] for i in items] == ["3D4V8UAYEMB38GU2"]
    stubs.pricing.assert_no_pending_responses()


def test_all_twelve_reserved_variants_are_parsed() -> None:
    stubs = Stubs()
    stubs.pricing.add_response("get_products", _load("get_products_m5_reserved.json"))
    with stubs:
        items = list(aws_sync.fetch_products(stubs.clients.pricing, "us-east-1", "m5.large"))
    observed, skipped = aws_sync.parse_product(items[0], "us-east-1")
    assert skipped == []
    reserved = {(o.fields["term_months"], o.fields["offering_class"].value,
                 o.fields["payment_option"].value): (o.amount, o.upfront_usd)
                for o in observed if o.fields["purchase_option"] == PurchaseOption.reserved}
    # Values copied from the real item's "Hrs" and "Quantity" dimensions.
    assert reserved == {
        (12, "standard", "no_upfront"): (Decimal("0.06"), Decimal(0)),
        (12, "standard", "partial_upfront"): (Decimal("0.029"), Decimal(252)),
        (12, "standard", "all_upfront"): (Decimal(0), Decimal(494)),
        (36, "standard", "no_upfront"): (Decimal("0.041"), Decimal(0)),
        (36, "standard", "partial_upfront"): (Decimal("0.019"), Decimal(505)),
        (36, "standard", "all_upfront"): (Decimal(0), Decimal(949)),
        (12, "convertible", "no_upfront"): (Decimal("0.071"), Decimal(0)),
        (12, "convertible", "partial_upfront"): (Decimal("0.034"), Decimal(294)),
        (12, "convertible", "all_upfront"): (Decimal(0), Decimal(577)),
        (36, "convertible", "no_upfront"): (Decimal("0.049"), Decimal(0)),
        (36, "convertible", "partial_upfront"): (Decimal("0.023"), Decimal(592)),
        (36, "convertible", "all_upfront"): (Decimal(0), Decimal(1161)),
    }
    on_demand = [o for o in observed if o.fields["purchase_option"] == PurchaseOption.on_demand]
    assert [o.amount for o in on_demand] == [Decimal("0.096")]


def test_capacity_block_zero_row_never_becomes_a_free_p5(session: Session) -> None:
    with Stubs() as stubs:
        stubs.queue_p5()
        report = _sync(session, stubs)
    on_demand = _points(session, instance_type=P5, purchase_option="on_demand",
                        region="us-east-1")
    assert [p.amount for p in on_demand] == [Decimal("55.04")]
    assert all(p.amount > 0 for p in _points(session, instance_type=P5))
    assert any("CapacityBlock" in s for s in report.skipped)
    # The $0 capacity-block *offer* is rejected too; the lowest real one is $746.88 / 24 h.
    blocks = _points(session, instance_type=P5, purchase_option="capacity_block")
    assert [p.amount for p in blocks] == [Decimal("31.12")]


def test_sync_reads_every_page_of_every_api(session: Session) -> None:
    with Stubs() as stubs:
        stubs.queue_p5()
        report = _sync(session, stubs)
        for s in (stubs.pricing, stubs.ec2, stubs.sp):
            s.assert_no_pending_responses()
    # Spot: 5 rows over 2 pages and 2 AZs; us-east-1a changed 19.8703 → 20.1145, 1b never did.
    spot = {p.item.availability_zone: p.amount for p in _points(session, kind=PriceKind.spot)}
    assert spot == {"us-east-1a": Decimal("20.1145"), "us-east-1b": Decimal("21.0326")}
    item_1a = _points(session, kind=PriceKind.spot, availability_zone="us-east-1a")[0].item
    _, history = repository.price_history(session, item_1a.id)
    assert [(p.effective_from.day, p.amount) for p in history] == [
        (24, Decimal("19.8703")), (29, Decimal("20.1145"))]  # 27th repeats the 24th: not added
    plans = _points(session, purchase_option="compute_savings_plan") + _points(
        session, purchase_option="instance_savings_plan")
    assert len(plans) == 12  # 2 plan types × 2 terms × 3 payment options
    assert sum("savings-plan rate not for" in s for s in report.skipped) == 2  # Windows, dedicated
    assert report.added_by_option["on_demand"] == 1


def test_an_instance_type_without_capacity_blocks_is_skipped_not_failed(
        session: Session) -> None:
    with Stubs() as stubs:
        stubs.queue_p5(no_blocks=True)
        report = _sync(session, stubs)
    assert report.points_added > 0
    assert any("no capacity blocks" in s for s in report.skipped)
    assert _points(session, instance_type=P5, purchase_option="capacity_block") == []


def test_sync_extends_the_snapshot_items_instead_of_duplicating_them(session: Session) -> None:
    load_snapshot(session)
    keys_before = set(session.scalars(select(PriceItem.item_key)))
    with Stubs() as stubs:
        stubs.queue_p5()
        _sync(session, stubs)
    new_keys = set(session.scalars(select(PriceItem.item_key))) - keys_before
    # p5 on-demand ($55.04 since 2025-06-01) and the us-east-1 capacity-block item already exist.
    assert not any(k.endswith("/p5.48xlarge/H100/8/on_demand") for k in new_keys)
    assert not any(k.endswith("us-east-1/p5.48xlarge/H100/8/capacity_block") for k in new_keys)
    on_demand = _points(session, instance_type=P5, purchase_option="on_demand",
                        region="us-east-1")
    assert [(p.amount, p.effective_from.date().isoformat()) for p in on_demand] == [
        (Decimal("55.04"), "2025-06-01")]


def test_running_twice_adds_nothing(session: Session) -> None:
    with Stubs() as stubs:
        stubs.queue_p5()
        first = _sync(session, stubs)
        before = _count(session)
        stubs.queue_p5()
        second = _sync(session, stubs, now=NOW.replace(hour=13))
    assert first.points_added > 0
    assert second.points_added == 0
    after = _count(session)
    assert after == before


def test_failure_half_way_writes_nothing(session: Session) -> None:
    before = _count(session)
    with Stubs() as stubs:
        stubs.queue_p5(spot_error=True)  # price list read, then spot is throttled
        with pytest.raises(Exception, match="RequestLimitExceeded"):
            _sync(session, stubs)
    assert _count(session) == before


def test_failure_while_writing_rolls_back_every_row(session: Session,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The database fails on the 10th write, after nine prices were flushed: none may remain.
    real = repository.record_price
    calls = []

    def failing(*args: Any, **kwargs: Any) -> PricePoint | None:
        calls.append(1)
        if len(calls) == 10:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(repository, "record_price", failing)
    before = _count(session)
    with Stubs() as stubs:
        stubs.queue_p5()
        with pytest.raises(OSError, match="disk full"):
            _sync(session, stubs)
    assert len(calls) == 10
    assert _count(session) == before


def test_offer_date_clashing_with_another_claim_is_recorded_from_retrieval(
        session: Session) -> None:
    # A quote already says p5 on-demand was $50 from the offer's own effectiveDate: history is
    # not rewritten, AWS's $55.04 is appended from the retrieval time.
    offer_date = datetime(2026, 9, 1, tzinfo=UTC)
    src = repository.get_or_create_source(session, name="manual quote", kind=SourceKind.manual,
                                          retrieved_at=offer_date)
    fields = {"kind": PriceKind.cloud_instance, "provider": "aws", "region": "us-east-1",
              "instance_type": P5, "gpu_model": "H100", "gpu_count": 8,
              "purchase_option": PurchaseOption.on_demand}
    item = repository.get_or_create_item(session, repository.item_key(fields), name="p5",
                                         unit="usd_per_hour", **fields)
    repository.record_price(session, item, src,
                            repository.NewPrice(Decimal(50), offer_date, offer_date))
    with Stubs() as stubs:
        stubs.queue_p5()
        _sync(session, stubs)
    _, history = repository.price_history(session, item.id)
    assert [(p.effective_from, p.amount) for p in history] == [
        (offer_date, Decimal(50)), (NOW, Decimal("55.04"))]
    assert "recorded from retrieval" in (history[-1].note or "")


def test_progress_bar_goes_to_the_given_stream(session: Session) -> None:
    stream = StringIO()
    with Stubs() as stubs:
        stubs.queue_p5()
        aws_sync.sync_aws(session, stubs.clients, "us-east-1", (P5,), now=NOW,
                          progress_stream=stream)
    text = stream.getvalue()
    assert "\r[" in text
    assert "5/5" in text
    assert "#" * 28 in text


@pytest.fixture
def cli_env(database_url: str, monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> Iterator[None]:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _store_size(url: str) -> tuple[int | None, ...]:
    with db.session_scope(url) as s:
        return _count(s)


@pytest.mark.usefixtures("cli_env")
def test_cli_without_credentials_prints_one_line(database_url: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    before = _store_size(database_url)
    assert cli.main(["prices", "sync", "aws", "--region", "us-east-1",
                     "--instance-types", P5]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: no AWS credentials found")
    assert "Traceback" not in capsys.readouterr().err
    assert _store_size(database_url) == before


@pytest.mark.usefixtures("cli_env")
def test_cli_unreachable_endpoint_prints_one_line(database_url: str,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on discard
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    before = _store_size(database_url)
    assert cli.main(["prices", "sync", "aws", "--instance-types", P5]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: cannot reach AWS")
    assert _store_size(database_url) == before
