"""Refresh AWS prices through boto3 and append them to the store's history.

Four AWS APIs, one transaction:
- `pricing.get_products` (on-demand and all 12 reserved-instance terms from the same items);
- `ec2.describe_spot_price_history` (per availability zone, timestamped);
- `savingsplans.describe_savings_plans_offering_rates` (compute and EC2-instance plans);
- `ec2.describe_capacity_block_offerings` (the lowest bookable hourly rate per region).

Everything is fetched first, then written inside one SAVEPOINT: a failure anywhere (network,
throttling, a conflicting price) leaves the store exactly as it was. Prices unchanged since the
last sync are not recorded again (`repository.record_price` is idempotent).

Shapes and traps are documented in shared/reference/aws_get_products_sample.json: each
PriceList entry is a JSON *string*; the same p5 SKU family has a `marketoption=CapacityBlock`
row priced $0.0000000000 that must never become a free p5; reserved upfront fees are a separate
price dimension with unit "Quantity", the hourly part has unit "Hrs".
"""

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any, TextIO

from botocore.exceptions import ClientError
from sqlalchemy.orm import Session

from app.pricing import repository
from app.pricing.models import (
    OfferingClass,
    PaymentOption,
    PriceItem,
    PriceKind,
    PriceSource,
    PriceUnit,
    PurchaseOption,
    SourceKind,
)
from app.pricing.repository import NewPrice

DEFAULT_INSTANCE_TYPES = ("p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge",
                          "p5en.48xlarge", "p6-b200.48xlarge")
# The Price List API answers from these regions only; us-east-1 serves every EC2 region.
PRICING_API_REGION = "us-east-1"
# Accelerator per instance family: the offer file gives the count ("gpu": "8") but no model.
# Same labels as the snapshot, so a sync extends the snapshot's items instead of duplicating them.
GPU_MODEL_BY_FAMILY = {"p4d": "A100", "p4de": "A100 80GB", "p5": "H100", "p5e": "H200",
                       "p5en": "H200", "p6-b200": "B200", "p6-b300": "B300"}
GPUS_PER_INSTANCE = 8  # every family above ships as one 8-GPU size (24xlarge/48xlarge)
# get_products filters selecting exactly one Linux on-demand row per instance type and region.
PRODUCT_FILTERS = {
    "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
    "capacitystatus": "Used", "marketoption": "OnDemand", "licenseModel": "No License required",
}
LINUX_PRODUCT = "Linux/UNIX"
SPOT_LOOKBACK = timedelta(days=7)
TERM_MONTHS = {"1yr": 12, "3yr": 36}
SP_TERM_MONTHS = {31_536_000: 12, 94_608_000: 36}  # durationSeconds of 1 and 3 years
PAYMENT = {"No Upfront": PaymentOption.no_upfront, "Partial Upfront": PaymentOption.partial_upfront,
           "All Upfront": PaymentOption.all_upfront}
SP_PLAN = {"Compute": PurchaseOption.compute_savings_plan,
           "EC2Instance": PurchaseOption.instance_savings_plan}
CAPACITY_BLOCK_PROBE_HOURS = 24  # shortest bookable block; the quote is per instance-hour
NOT_OFFERED_CODES = {"InvalidParameterValue", "InvalidParameterCombination", "Unsupported",
                     "UnsupportedOperation"}


@dataclass(frozen=True)
class Observed:
    """One price read from AWS, before it is written."""

    fields: dict[str, Any]  # PriceItem identity and description
    amount: Decimal
    effective_from: datetime
    upfront_usd: Decimal | None = None
    note: str | None = None


@dataclass
class SyncReport:
    observed: int = 0
    points_added: int = 0
    skipped: list[str] = field(default_factory=list)  # rows rejected, with the reason
    added_by_option: dict[str, int] = field(default_factory=dict)


class Progress:
    """A one-line terminal progress bar on stderr (stdlib only)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 28) -> None:
        self.total, self.done, self.width = max(total, 1), 0, width
        self.stream = stream if stream is not None else sys.stderr

    def step(self, label: str) -> None:
        self.done += 1
        filled = self.width * self.done // self.total
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} {label:<40.40}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class AwsClients:
    pricing: Any
    ec2: Any
    savingsplans: Any

    @classmethod
    def create(cls, region: str) -> "AwsClients":
        import boto3  # imported here: the web app never needs it

        # A fresh session: credentials are resolved now, not cached from an earlier call.
        session = boto3.session.Session()
        return cls(pricing=session.client("pricing", region_name=PRICING_API_REGION),
                   ec2=session.client("ec2", region_name=region),
                   savingsplans=session.client("savingsplans", region_name="us-east-1"))


def gpu_model_for(instance_type: str) -> str | None:
    return GPU_MODEL_BY_FAMILY.get(instance_type.split(".")[0])


def _instance_fields(region: str, instance_type: str,
                     gpu_count: int | None = None) -> dict[str, Any]:
    model = gpu_model_for(instance_type)
    if gpu_count is None and model is not None:
        gpu_count = GPUS_PER_INSTANCE
    return {"kind": PriceKind.cloud_instance, "provider": "aws", "region": region,
            "instance_type": instance_type, "gpu_model": model, "gpu_count": gpu_count,
            "unit": PriceUnit.usd_per_hour}


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


# --- pricing.get_products ---------------------------------------------------------------------

def fetch_products(pricing: Any, region: str, instance_type: str) -> Iterator[dict[str, Any]]:
    filters = [{"Type": "TERM_MATCH", "Field": "instanceType", "Value": instance_type},
               {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    filters += [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in PRODUCT_FILTERS.items()]
    pages = pricing.get_paginator("get_products").paginate(
        ServiceCode="AmazonEC2", FormatVersion="aws_v1", Filters=filters,
        PaginationConfig={"PageSize": 100})
    for page in pages:
        for entry in page.get("PriceList", []):
            yield json.loads(entry) if isinstance(entry, str) else entry


def _dimensions(term: dict[str, Any]) -> tuple[Decimal | None, Decimal | None]:
    """(hourly, upfront) of one offer term: "Hrs" is the hourly rate, "Quantity" the fee."""
    hourly = upfront = None
    for dim in term.get("priceDimensions", {}).values():
        usd = Decimal(dim["pricePerUnit"]["USD"])
        if dim.get("unit") == "Hrs":
            hourly = usd
        elif dim.get("unit") == "Quantity":
            upfront = usd
    return hourly, upfront


def parse_product(item: dict[str, Any], region: str) -> tuple[list[Observed], list[str]]:
    """On-demand and reserved prices of one decoded get_products item, plus why rows were
    rejected. The attribute check repeats the request filters: a $0 CapacityBlock row that
    slips through (or a Windows/BYOL/dedicated row) is rejected, never stored."""
    attrs = item.get("product", {}).get("attributes", {})
    name = attrs.get("instanceType", "?")
    # An attribute the offer lacks is tolerated (marketoption only exists since 2023); one
    # that is present must match the request filters.
    wrong = {k: attrs[k] for k, v in PRODUCT_FILTERS.items() if k in attrs and attrs[k] != v}
    if wrong:
        return [], [f"{name}: not a Linux shared on-demand row ({wrong})"]
    gpus = int(attrs["gpu"]) if str(attrs.get("gpu", "")).isdigit() else None
    base = _instance_fields(region, name, gpus)
    sku = item["product"].get("sku")
    out: list[Observed] = []
    skipped: list[str] = []
    for term in item.get("terms", {}).get("OnDemand", {}).values():
        hourly, _ = _dimensions(term)
        if hourly is None or hourly <= 0:
            skipped.append(f"{name}: on-demand rate {hourly} is not a price")
            continue
        out.append(Observed({**base, "purchase_option": PurchaseOption.on_demand,
                             "name": f"{name} on-demand", "part_number": sku},
                            hourly, _day(term["effectiveDate"]),
                            note=f"AWS offer {item.get('version')}, term {term['offerTermCode']}"))
    for term in item.get("terms", {}).get("Reserved", {}).values():
        ta = term.get("termAttributes", {})
        hourly, upfront = _dimensions(term)
        months = TERM_MONTHS.get(ta.get("LeaseContractLength", ""))
        payment = PAYMENT.get(ta.get("PurchaseOption", ""))
        if hourly is None or months is None or payment is None:
            skipped.append(f"{name}: unreadable reserved term {term.get('offerTermCode')}")
            continue
        cls = OfferingClass(ta.get("OfferingClass", "standard"))
        out.append(Observed(
            {**base, "purchase_option": PurchaseOption.reserved, "term_months": months,
             "payment_option": payment, "offering_class": cls, "part_number": sku,
             "name": f"{name} reserved {ta['LeaseContractLength']} {cls.value} "
                     f"{ta['PurchaseOption'].lower()}"},
            hourly, _day(term["effectiveDate"]), upfront_usd=upfront or Decimal(0),
            note=f"AWS offer {item.get('version')}, term {term['offerTermCode']}"))
    return out, skipped


# --- ec2.describe_spot_price_history ----------------------------------------------------------

def fetch_spot(ec2: Any, region: str, instance_type: str, now: datetime) -> list[Observed]:
    pages = ec2.get_paginator("describe_spot_price_history").paginate(
        InstanceTypes=[instance_type], ProductDescriptions=[LINUX_PRODUCT],
        StartTime=now - SPOT_LOOKBACK, EndTime=now)
    out = []
    for page in pages:
        for row in page.get("SpotPriceHistory", []):
            az = row["AvailabilityZone"]
            fields = {**_instance_fields(region, instance_type), "kind": PriceKind.spot,
                      "availability_zone": az, "purchase_option": PurchaseOption.spot,
                      "name": f"{instance_type} spot {az}"}
            out.append(Observed(fields, Decimal(row["SpotPrice"]),
                                row["Timestamp"].astimezone(UTC)))
    # Oldest first, so each AZ's history is appended in order.
    return sorted(out, key=lambda o: o.effective_from)


# --- savingsplans.describe_savings_plans_offering_rates ---------------------------------------

def fetch_savings_plans(sp: Any, region: str, instance_type: str,
                        now: datetime) -> tuple[list[Observed], list[str]]:
    request = {
        "savingsPlanTypes": list(SP_PLAN), "products": ["EC2"], "serviceCodes": ["AmazonEC2"],
        "operations": ["RunInstances"],
        "filters": [{"name": "region", "values": [region]},
                    {"name": "instanceType", "values": [instance_type]},
                    {"name": "productDescription", "values": [LINUX_PRODUCT]},
                    {"name": "tenancy", "values": ["shared"]}],
        "maxResults": 1000,
    }
    out: list[Observed] = []
    skipped: list[str] = []
    token = None
    while True:
        resp = sp.describe_savings_plans_offering_rates(
            **request, **({"nextToken": token} if token else {}))
        for rate in resp.get("searchResults", []):
            obs = _savings_plan_rate(rate, region, instance_type)
            if isinstance(obs, str):
                skipped.append(obs)
            else:
                out.append(Observed(obs[0], obs[1], now))
        token = resp.get("nextToken")
        if not token:
            return out, skipped


def _savings_plan_rate(rate: dict[str, Any], region: str,
                       instance_type: str) -> tuple[dict[str, Any], Decimal] | str:
    offer = rate.get("savingsPlanOffering", {})
    props = {p["name"]: p["value"] for p in rate.get("properties", [])}
    plan = SP_PLAN.get(offer.get("planType", ""))
    months = SP_TERM_MONTHS.get(int(offer.get("durationSeconds", 0)))
    payment = PAYMENT.get(offer.get("paymentOption", ""))
    # Shared-tenancy usage is "BoxUsage:<type>", region-prefixed outside us-east-1
    # ("USW2-BoxUsage:p4d.24xlarge"); dedicated and host usage are other prices.
    usage = str(rate.get("usageType", ""))
    shared = usage == f"BoxUsage:{instance_type}" or usage.endswith(f"-BoxUsage:{instance_type}")
    if (plan is None or months is None or payment is None or rate.get("unit") != "Hrs"
            or not shared
            or props.get("tenancy", "shared") != "shared"
            or props.get("productDescription", LINUX_PRODUCT) != LINUX_PRODUCT):
        return f"{instance_type}: savings-plan rate not for Linux shared hours ({offer})"
    amount = Decimal(rate["rate"])
    if amount <= 0:
        return f"{instance_type}: savings-plan rate {amount} is not a price"
    fields = {**_instance_fields(region, instance_type), "purchase_option": plan,
              "term_months": months, "payment_option": payment,
              "name": f"{instance_type} {offer['planType']} savings plan {months // 12}y "
                      f"{offer['paymentOption'].lower()}"}
    return fields, amount


# --- ec2.describe_capacity_block_offerings ----------------------------------------------------

def fetch_capacity_blocks(ec2: Any, region: str, instance_type: str,
                          now: datetime) -> tuple[list[Observed], list[str]]:
    """The lowest effective hourly rate among the blocks bookable now (fee / instance-hours)."""
    best: tuple[Decimal, dict[str, Any]] | None = None
    skipped: list[str] = []
    token = None
    while True:
        try:
            resp = ec2.describe_capacity_block_offerings(
                InstanceType=instance_type, InstanceCount=1,
                CapacityDurationHours=CAPACITY_BLOCK_PROBE_HOURS,
                **({"NextToken": token} if token else {}))
        except ClientError as exc:
            # Types or regions without Capacity Blocks answer with a parameter error: that is
            # "no offer", not a failed sync. Throttling and auth errors still abort.
            code = exc.response.get("Error", {}).get("Code", "")
            if code not in NOT_OFFERED_CODES:
                raise
            return [], [f"{instance_type}: no capacity blocks in {region} ({code})"]
        for offer in resp.get("CapacityBlockOfferings", []):
            hours = int(offer["CapacityBlockDurationHours"]) * int(offer["InstanceCount"])
            fee = Decimal(offer["UpfrontFee"])
            if fee <= 0 or hours <= 0 or offer.get("CurrencyCode", "USD") != "USD":
                offer_id = offer.get("CapacityBlockOfferingId")
                skipped.append(f"{instance_type}: capacity block {offer_id} fee {fee} "
                               f"{offer.get('CurrencyCode')} for {hours} h is not a price")
                continue
            hourly = fee / hours
            if best is None or hourly < best[0]:
                best = (hourly, offer)
        token = resp.get("NextToken")
        if not token:
            break
    if best is None:
        return [], skipped
    hourly, offer = best
    fields = {**_instance_fields(region, instance_type),
              "purchase_option": PurchaseOption.capacity_block,
              "name": f"{instance_type} capacity block"}
    note = (f"Lowest of the offers for a {CAPACITY_BLOCK_PROBE_HOURS} h block: "
            f"{offer['CapacityBlockOfferingId']} in {offer['AvailabilityZone']}, "
            f"${offer['UpfrontFee']} upfront from {offer['StartDate']:%Y-%m-%d}")
    return [Observed(fields, hourly.quantize(Decimal("0.0000000001")), now, note=note)], skipped


# --- orchestration ----------------------------------------------------------------------------

Fetch = Callable[[], tuple[list[Observed], list[str]]]


def _products(clients: AwsClients, region: str, it: str) -> tuple[list[Observed], list[str]]:
    obs: list[Observed] = []
    skipped: list[str] = []
    for item in fetch_products(clients.pricing, region, it):
        o, s = parse_product(item, region)
        obs += o
        skipped += s
    return obs, skipped


def _spot(clients: AwsClients, region: str, it: str,
          now: datetime) -> tuple[list[Observed], list[str]]:
    return fetch_spot(clients.ec2, region, it, now), []


def _steps(clients: AwsClients, region: str, instance_types: Iterable[str],
           now: datetime) -> list[tuple[str, Fetch]]:
    steps: list[tuple[str, Fetch]] = []
    for it in instance_types:
        steps += [
            (f"price list {it}", partial(_products, clients, region, it)),
            (f"spot {it}", partial(_spot, clients, region, it, now)),
            (f"savings plans {it}",
             partial(fetch_savings_plans, clients.savingsplans, region, it, now)),
            (f"capacity blocks {it}", partial(fetch_capacity_blocks, clients.ec2, region, it, now)),
        ]
    return steps


def _source(session: Session, region: str, now: datetime) -> PriceSource:
    return repository.get_or_create_source(
        session, name=f"AWS APIs via boto3 ({region})", retrieved_at=now, kind=SourceKind.aws_api,
        url="https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/"
            "API_pricing_GetProducts.html",
        notes="pricing.get_products, ec2.describe_spot_price_history, "
              "savingsplans.describe_savings_plans_offering_rates, "
              "ec2.describe_capacity_block_offerings")


def _dated(session: Session, item: PriceItem, obs: Observed, now: datetime) -> NewPrice:
    """The price to append. AWS dates an offer by its term's effectiveDate; when the store
    already holds a *different* price from exactly that instant (e.g. a snapshot claim), history
    is not rewritten: AWS's price is recorded from the retrieval time instead, and says so."""
    new = repository.NewPrice(amount=obs.amount, effective_from=obs.effective_from,
                              retrieved_at=now, upfront_usd=obs.upfront_usd, note=obs.note)
    clash = repository.point_at(session, item, obs.effective_from)
    if clash is None or repository.same_price(clash, new):
        return new
    note = (f"{obs.note or 'AWS'}; offer effective {obs.effective_from:%Y-%m-%d}, when the store "
            f"already had {clash.amount} from another source, so recorded from retrieval")
    return replace(new, effective_from=now, note=note)


def write_observed(session: Session, observed: list[Observed], region: str,
                   now: datetime, report: SyncReport) -> None:
    """Append every observed price in one SAVEPOINT: all of them, or none."""
    with session.begin_nested():
        source = _source(session, region, now)
        for obs in observed:
            fields = {k: v for k, v in obs.fields.items() if v is not None}
            item = repository.get_or_create_item(session, repository.item_key(fields), **fields)
            new = _dated(session, item, obs, now)
            if repository.record_price(session, item, source, new) is not None:
                report.points_added += 1
                key = str(fields["purchase_option"])
                report.added_by_option[key] = report.added_by_option.get(key, 0) + 1
        if report.points_added == 0:
            session.delete(source)  # an unchanged sync leaves no trace, not even its source
            session.flush()


def sync_aws(session: Session, clients: AwsClients, region: str,
             instance_types: Iterable[str] = DEFAULT_INSTANCE_TYPES, *,
             now: datetime | None = None, progress_stream: TextIO | None = None) -> SyncReport:
    """Fetch AWS prices for `instance_types` in `region`, then append what changed.

    Network and API errors (botocore's NoCredentialsError, EndpointConnectionError,
    ClientError) propagate unchanged after nothing has been written; the caller words them."""
    now = now or datetime.now(UTC).replace(microsecond=0)
    steps = _steps(clients, region, list(instance_types), now)
    progress = Progress(len(steps) + 1, progress_stream)
    report = SyncReport()
    observed: list[Observed] = []
    try:
        for label, fetch in steps:
            progress.step(label)
            obs, skipped = fetch()
            observed += obs
            report.skipped += skipped
        progress.step(f"writing {len(observed)} prices")
        report.observed = len(observed)
        write_observed(session, observed, region, now, report)
    finally:
        progress.close()
    return report
