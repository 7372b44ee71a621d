"""Planner use case: prices as of a date -> payment terms, catalog -> candidate clusters,
then the pure planner (app.modelling.planner) and the shaping of its answer.

A way of paying whose price is missing from the store (and not given in the request) is
left out with a note; the answer never fails for want of one price.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

import numpy as np
from sqlalchemy.orm import Session

from app.errors import AppError, InvalidInput
from app.hardware.catalog import fabric, gpu, load_fabrics
from app.modelling.finance.money import HOURS_PER_MONTH, HOURS_PER_YEAR
from app.modelling.finance.network import NetworkDesign, network_bill
from app.modelling.planner import (
    ClusterArrays,
    ClusterSpec,
    PaymentTerms,
    Plan,
    Workload,
    break_even_price,
    break_even_utilization,
    evaluate_clusters,
    explain_infeasible,
    fabric_value,
    plan,
)
from app.modelling.planner.clusters import STEP_FIELDS
from app.modelling.planner.explain import monthly_spend_usd
from app.modelling.throughput import (
    ClusterConfig,
    Layout,
    LayoutError,
    ModelShape,
    TrainingConfig,
    estimate,
    preset,
)
from app.planner.schemas import (
    BreakEvenPriceOut,
    BreakEvenUtilizationOut,
    Explanation,
    FabricValueOut,
    InfeasibleOut,
    NetworkWhatIf,
    OptionDetail,
    OptionOut,
    PaymentOverride,
    PlanRequest,
    PlanResponse,
    PriceUsed,
    SeedCaseCheck,
    gpu_keys,
)
from app.pricing.book import price_book
from app.pricing.models import OfferingClass, PriceKind, PricePoint, PriceUnit, PurchaseOption
from app.pricing.service import as_of_instant, effective_hourly, require_price
from app.tco.defaults import GPUS_PER_NODE, NICS_PER_NODE

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class AwsInstance:
    instance_type: str
    fabric: str  # scale-out fabric in the hardware catalog
    nics: int
    nic_gbits_per_s: float


# AWS instance pages: p5.48xlarge 3,200 Gbps EFA (32 x 100 Gb/s EFAv2); p5en.48xlarge 3,200
# Gbps EFAv3 (16 x 200 Gb/s); p6-b200.48xlarge 3,200 Gbps EFAv4 (8 x 400 Gb/s); p4d.24xlarge
# 400 Gbps EFA (4 x 100 Gb/s, first-generation EFA, modelled with the EFA v2 efficiency).
AWS_INSTANCES: dict[str, AwsInstance] = {
    "H100": AwsInstance("p5.48xlarge", "AWS EFA v2", 32, 100.0),
    "H200": AwsInstance("p5en.48xlarge", "AWS EFA v3", 16, 200.0),
    "B200": AwsInstance("p6-b200.48xlarge", "AWS EFA v4", 8, 400.0),
    "A100": AwsInstance("p4d.24xlarge", "AWS EFA v2", 4, 100.0),
}
# Spot reclaims per node-hour. AWS Spot Instance Advisor publishes a "frequency of
# interruption" band per instance type (share of instances reclaimed over the past month);
# its top band is ">20%", where large GPU instances usually sit: 20%/month = 0.2/730 per
# node-hour, the lower edge of that band. Seed 001 claims spot GPUs are "preempted every 4-6
# hours" (a claim, about 1/5 per node-hour); pass it as spot_interruption_per_node_hour.
SPOT_ADVISOR_PER_NODE_HOUR = 0.20 / HOURS_PER_MONTH
SPOT_SEED_CLAIM_PER_NODE_HOUR = 1.0 / 5.0
# AWS bills Linux on-demand and spot per second (60 s minimum); capacity blocks are bought
# in 24-hour blocks (EC2 user guide, "Capacity Blocks for ML").
PER_SECOND_HOURS = 1.0 / 3600.0
CAPACITY_BLOCK_HOURS = 24.0
STAFF_NODES_PER_FTE = 64  # as app.tco.service: one operations engineer per 64 nodes, min 1

LABELS = {
    "buy": "Buy (owned facility)", "colo": "Buy and colocate",
    "aws_on_demand": "AWS on-demand", "aws_reserved_1y": "AWS reserved 1y",
    "aws_reserved_3y": "AWS reserved 3y", "aws_savings_plan_1y": "AWS compute savings plan 1y",
    "aws_savings_plan_3y": "AWS compute savings plan 3y",
    "aws_capacity_block": "AWS capacity block", "aws_spot": "AWS spot",
    "gpu_cloud": "GPU cloud on-demand", "gpu_cloud_committed": "GPU cloud committed",
    "gpu_cloud_spot": "GPU cloud spot",
}
TERM_MONTHS = {"aws_reserved_1y": 12, "aws_reserved_3y": 36, "aws_savings_plan_1y": 12,
               "aws_savings_plan_3y": 36}
GPU_CLOUD_OPTIONS = {"gpu_cloud": PurchaseOption.on_demand,
                     "gpu_cloud_committed": PurchaseOption.committed,
                     "gpu_cloud_spot": PurchaseOption.spot}
# GPU clouds sell H100/H200/B200 clusters on 400 Gb/s InfiniBand (ConnectX-7 NDR; DGX B200
# also ships ConnectX-7): modelled as NDR, non-blocking.
GPU_CLOUD_FABRIC = "InfiniBand NDR"


class _Prices:
    """Looks prices up as of one date, remembering what it used and what was missing."""

    def __init__(self, session: Session, as_of: date) -> None:
        self.session, self.as_of = session, as_of
        self.used: dict[int, PricePoint] = {}

    def get(self, field: str, **filters: object) -> PricePoint | None:
        try:
            point = require_price(self.session, self.as_of, field, **filters)
        except InvalidInput:
            return None
        self.used[point.id] = point
        return point

    def offers(self, **filters: object) -> list[PricePoint]:
        """Every offer in force for the filters (e.g. each reserved variant, each provider),
        market observations left out: the rows a way of paying may be priced from."""
        return price_book(self.session, as_of_instant(self.as_of)).offers(**filters)

    def offer(self, **filters: object) -> PricePoint | None:
        """The first offer in force for the filters (as `get`, for a way of paying)."""
        found = self.offers(**filters)
        if found:
            self.used[found[0].id] = found[0]
        return found[0] if found else None

    def mark_used(self, point: PricePoint) -> None:
        self.used[point.id] = point


def _effective_per_gpu_hour(p: PricePoint, term_months: int) -> float:
    """Hourly rate with the upfront fee spread over the term (AWS's "effective hourly"),
    per GPU: the one figure that ranks all-, partial- and no-upfront variants."""
    return effective_hourly(float(p.amount), float(p.upfront_usd or 0),
                            term_months) / (p.item.gpu_count or GPUS_PER_NODE)


def cheapest_variant(points: list[PricePoint], term_months: int) -> PricePoint | None:
    """Of a reservation's variants (payment option x offering class; a real `prices sync
    aws` stores all 12), the cheapest effective hourly per GPU; ties go to standard before
    convertible, then all/no/partial upfront in name order, so the choice is deterministic."""
    if not points:
        return None
    def key(p: PricePoint) -> tuple[float, bool, str, str]:
        return (round(_effective_per_gpu_hour(p, term_months), 10),
                p.item.offering_class == OfferingClass.convertible,
                str(p.item.payment_option or ""), p.item.name)
    return min(points, key=key)


def _variant(p: PricePoint) -> str:
    parts = [str(x.value).replace("_", " ") for x in (p.item.offering_class,
                                                      p.item.payment_option) if x]
    return " ".join(parts)


def _estimate(p: PricePoint) -> str:
    return ", estimate" if p.source.name.lower().startswith("estimate") \
        or "estimate" in p.item.name.lower() else ""


@dataclass(frozen=True)
class OwnedInputs:
    """Per-GPU owned-cluster figures shared by buy and colo (for one GPU type)."""

    capex_usd_per_gpu: float  # GPU + its share of the server, before resale
    busy_kw_per_gpu: float
    idle_kw_per_gpu: float
    pue: float
    usd_per_kwh: float


def _owned_inputs(prices: _Prices, key: str) -> OwnedInputs | None:
    eq = PriceKind.equipment
    g = prices.get("gpu_types", kind=eq, category="gpu", gpu_model=key)
    server = prices.get("gpu_types", kind=eq, category="server", gpu_count=GPUS_PER_NODE)
    idle = prices.get("gpu_types", kind=PriceKind.facility, category="idle_power_fraction")
    pue = prices.get("gpu_types", kind=PriceKind.facility, category="pue")
    power = prices.get("gpu_types", kind=PriceKind.electricity, region="us")
    if not (g and server and idle and pue and power):
        return None
    busy_kw = float(server.item.power_w or 0) / 1000.0 / GPUS_PER_NODE
    return OwnedInputs(float(g.amount) + float(server.amount) / GPUS_PER_NODE, busy_kw,
                       busy_kw * float(idle.amount), float(pue.amount), float(power.amount))


def _owned_terms(req: PlanRequest, key: str, o: OwnedInputs, colo_usd_per_kw_month: float | None
                 ) -> PaymentTerms:
    """Owned over its depreciation life. Held: maintenance (+ idle power x PUE for an owned
    facility, or the colocation fee on contracted kW); busy: power above idle (owned facility
    only; a colocation fee is taken as all-in). Staff is per cluster (ClusterSpec)."""
    life_h = req.owned_life_months * HOURS_PER_MONTH
    upfront = o.capex_usd_per_gpu * (1.0 - req.resale_fraction)
    maint = req.maintenance_fraction_per_year * o.capex_usd_per_gpu / HOURS_PER_YEAR
    if colo_usd_per_kw_month is None:
        held = maint + o.idle_kw_per_gpu * o.pue * o.usd_per_kwh
        busy = (o.busy_kw_per_gpu - o.idle_kw_per_gpu) * o.pue * o.usd_per_kwh
        return PaymentTerms("buy", LABELS["buy"], key, held, upfront, life_h, 1.0, 0.0, busy,
                            owned=True)
    held = maint + o.busy_kw_per_gpu * colo_usd_per_kw_month / HOURS_PER_MONTH
    return PaymentTerms("colo", LABELS["colo"], key, held, upfront, life_h, 1.0, 0.0, 0.0,
                        owned=True)


def _aws_terms(prices: _Prices, req: PlanRequest, key: str, pay: str) -> PaymentTerms | None:
    """An AWS way of paying for the GPU's instance type. Reservations and savings plans: the
    cheapest effective hourly of the stored variants (cheapest_variant), named in the label;
    a commitment is billed every hour of its term, its upfront fee once per term."""
    inst = AWS_INSTANCES.get(key)
    if inst is None:
        return None
    base = {"kind": PriceKind.cloud_instance, "provider": "aws", "region": req.region,
            "gpu_model": key, "instance_type": inst.instance_type}
    fkey = f"aws:{inst.instance_type}"
    label = f"{LABELS[pay]} ({inst.instance_type}"
    if pay in TERM_MONTHS:
        months = TERM_MONTHS[pay]
        option = PurchaseOption.reserved if pay.startswith("aws_reserved") \
            else PurchaseOption.compute_savings_plan
        p = cheapest_variant(prices.offers(**base, purchase_option=option, term_months=months),
                             months)
        if p is None:
            return None
        prices.mark_used(p)
        variant = _variant(p)
        label += (f", {variant}, cheapest effective hourly" if variant else "") + _estimate(p)
        upfront = float(p.upfront_usd or 0) / (p.item.gpu_count or GPUS_PER_NODE)
        return PaymentTerms(pay, label + ")", key, _per_gpu(p), upfront,
                            months * HOURS_PER_MONTH, 1.0, fabric_key=fkey)
    if pay == "aws_spot":
        p = prices.offer(**{**base, "kind": PriceKind.spot})
    else:
        option = PurchaseOption.capacity_block if pay == "aws_capacity_block" \
            else PurchaseOption.on_demand
        p = prices.offer(**base, purchase_option=option)
    if p is None:
        return None
    inc = CAPACITY_BLOCK_HOURS if pay == "aws_capacity_block" else PER_SECOND_HOURS
    spot = _spot_rate(req) if pay == "aws_spot" else 0.0
    return PaymentTerms(pay, label + _estimate(p) + ")", key, _per_gpu(p), 0.0, 0.0, inc, spot,
                        fabric_key=fkey)


def _gpu_cloud_terms(prices: _Prices, req: PlanRequest, key: str, pay: str
                     ) -> list[PaymentTerms]:
    """One payment per provider with a stored row for this GPU and purchase option, labelled
    by provider. Committed: every hour of the stated term is paid (a row without a term is
    costed as a 1-month commitment, as the TCO engine does); spot: reclaims at
    spot_interruption_per_node_hour (default: AWS Spot Advisor's top band, see above)."""
    out = []
    points = prices.offers(kind=PriceKind.gpu_cloud, gpu_model=key,
                           purchase_option=GPU_CLOUD_OPTIONS[pay])
    for p in sorted(points, key=lambda q: (q.item.provider or "", q.item.item_key)):
        prices.mark_used(p)
        provider = p.item.provider or "gpu cloud"
        rate = float(p.amount) if p.item.unit == PriceUnit.usd_per_gpu_hour else _per_gpu(p)
        label = p.item.name  # the store's own name spells the provider ("Vast.ai H100 spot")
        months, spot = 0, 0.0
        if pay == "gpu_cloud_committed":
            months = p.item.term_months or 1
            label += f" ({months} mo" + (")" if p.item.term_months else ", term not stated)")
        elif pay == "gpu_cloud_spot":
            spot = _spot_rate(req)
        out.append(PaymentTerms(f"{pay}:{provider}", label, key, rate, 0.0,
                                months * HOURS_PER_MONTH, 1.0 if months else PER_SECOND_HOURS,
                                spot, fabric_key=GPU_CLOUD_FABRIC))
    return out


def _spot_rate(req: PlanRequest) -> float:
    r = req.spot_interruption_per_node_hour
    return SPOT_ADVISOR_PER_NODE_HOUR if r is None else r


def _per_gpu(p: PricePoint) -> float:
    return float(p.amount) / (p.item.gpu_count or GPUS_PER_NODE)


def _from_override(req: PlanRequest, key: str, o: PaymentOverride) -> PaymentTerms | None:
    """A payment built from the request alone (no stored price)."""
    pay = o.payment
    rate = o.usd_per_gpu_hour
    if rate is None:
        return None
    inst = AWS_INSTANCES.get(key)
    if pay.startswith("aws_") and inst is None:
        return None
    fkey = f"aws:{inst.instance_type}" if inst and pay.startswith("aws_") else None
    up = o.upfront_usd_per_gpu or 0.0
    label = LABELS[pay] + " (request price)"
    if pay in TERM_MONTHS:
        return PaymentTerms(pay, label, key, rate, up, TERM_MONTHS[pay] * HOURS_PER_MONTH, 1.0,
                            fabric_key=fkey)
    if pay in ("buy", "colo"):
        if o.upfront_usd_per_gpu is None:
            return None
        return PaymentTerms(pay, label, key, rate, up, req.owned_life_months * HOURS_PER_MONTH,
                            owned=True)
    inc = CAPACITY_BLOCK_HOURS if pay == "aws_capacity_block" else PER_SECOND_HOURS
    spot = _spot_rate(req) if pay == "aws_spot" else 0.0
    if pay.startswith("gpu_cloud"):
        fkey = GPU_CLOUD_FABRIC
        spot = _spot_rate(req) if pay == "gpu_cloud_spot" else 0.0
        if pay == "gpu_cloud_committed":  # a request price without a term: one month
            return PaymentTerms(pay, label, key, rate, up, HOURS_PER_MONTH, 1.0,
                                fabric_key=fkey)
    return PaymentTerms(pay, label, key, rate, up, 0.0, inc, spot, fabric_key=fkey)


def _with_override(t: PaymentTerms, o: PaymentOverride) -> PaymentTerms:
    return replace(t, label=t.label + " (request price)",
                   usd_per_gpu_hour=o.usd_per_gpu_hour
                   if o.usd_per_gpu_hour is not None else t.usd_per_gpu_hour,
                   upfront_usd_per_gpu=o.upfront_usd_per_gpu
                   if o.upfront_usd_per_gpu is not None else t.upfront_usd_per_gpu)


def build_payments(prices: _Prices, req: PlanRequest) -> tuple[list[PaymentTerms], list[str]]:
    """PaymentTerms per (requested payment x GPU type; GPU clouds per provider), request
    overrides applied (to every provider's row of that payment)."""
    terms: list[PaymentTerms] = []
    notes: list[str] = []
    overrides = {(o.payment, o.gpu): o for o in req.overrides}
    colo_fee = req.colo_usd_per_kw_month
    if "colo" in req.payments and colo_fee is None:
        p = prices.get("colo_usd_per_kw_month", kind=PriceKind.colocation, region="us")
        colo_fee = float(p.amount) if p else None
    for key in req.gpu_types:
        owned = _owned_inputs(prices, key) if {"buy", "colo"} & set(req.payments) else None
        for pay in req.payments:
            found: list[PaymentTerms] = []
            if pay == "buy" and owned:
                found = [_owned_terms(req, key, owned, None)]
            elif pay == "colo" and owned and colo_fee is not None:
                found = [_owned_terms(req, key, owned, colo_fee)]
            elif pay.startswith("aws_"):
                t = _aws_terms(prices, req, key, pay)
                found = [t] if t else []
            elif pay in GPU_CLOUD_OPTIONS:
                found = _gpu_cloud_terms(prices, req, key, pay)
            o = overrides.get((pay, key))
            if o is not None:
                if found:
                    found = [_with_override(t, o) for t in found]
                else:
                    t = _from_override(req, key, o)
                    found = [t] if t else []
            if not found:
                notes.append(f"{LABELS[pay]} for {key}: no price as of {prices.as_of} "
                             f"({_missing_hint(pay, key)}); left out")
            terms += found
    return terms, notes


def _missing_hint(pay: str, key: str) -> str:
    if pay.startswith("aws_") and key not in AWS_INSTANCES:
        return f"no AWS instance with {key} is modelled"
    if pay == "colo":
        return "give colo_usd_per_kw_month"
    if pay.startswith("aws_savings_plan"):
        return ("the snapshot has no savings-plan rate (AWS publishes them in its separate "
                "Savings Plans price list): give one in overrides")
    return "give one in overrides"


def build_clusters(prices: _Prices, req: PlanRequest, payments: list[PaymentTerms]
                   ) -> tuple[list[ClusterSpec], list[str]]:
    """Buyer-built clusters (each fabric x oversubscription) and each cloud offer's own."""
    notes: list[str] = []
    specs: list[ClusterSpec] = []
    kit = prices.get("fabrics", kind=PriceKind.equipment, category="node_network_kit")
    ib_switch = prices.get("fabrics", kind=PriceKind.equipment, category="ib_switch")
    staff = prices.get("payments", kind=PriceKind.staff, region="us")
    eth_switch = prices.get("fabrics", kind=PriceKind.equipment, category="eth_switch")
    switch_usd = dict(req.switch_usd)
    if ib_switch is not None:  # the stored switch is the Quantum-2 NDR QM9790
        switch_usd.setdefault("InfiniBand NDR", float(ib_switch.amount))
    if eth_switch is not None:  # the stored one is a Spectrum-4 SN5600 (64 x 800GbE, 128 x
        # 400GbE with splitters): priced for every RoCE/Ethernet fabric, a 100G build included
        for name, f in load_fabrics().items():
            if f.kind in ("roce", "ethernet"):
                switch_usd.setdefault(name, float(eth_switch.amount))
    owned_wanted = any(p.owned for p in payments)
    unpriced = [f for f in req.fabrics if f not in switch_usd]
    if owned_wanted and unpriced:
        notes.append("owned builds need a switch price per fabric; none stored for "
                     f"{', '.join(unpriced)} (give switch_usd): owned options on those fabrics "
                     "are left out, but the network what-if still values them")
    gpus_wanted = {p.gpu for p in payments}
    for key in req.gpu_types:
        g = gpu(gpu_keys()[key])
        up = fabric(g.scale_up)
        for nodes in req.node_counts:
            fte = max(1, math.ceil(nodes / STAFF_NODES_PER_FTE))
            staff_h = fte * float(staff.amount) / HOURS_PER_YEAR if staff else 0.0
            for name in req.fabrics:
                f = fabric(name)
                for over in req.oversubscription:
                    capex = float("nan")
                    if name in switch_usd and kit is not None:
                        bill = network_bill(nodes, NetworkDesign(oversubscription=over))
                        capex = (float(bill.ib_switches) * switch_usd[name]
                                 + nodes * float(kit.amount))
                    maint = req.maintenance_fraction_per_year * capex / HOURS_PER_YEAR
                    specs.append(ClusterSpec(
                        key, g, nodes, GPUS_PER_NODE, up, f, NICS_PER_NODE,
                        f.port_gbits_per_s, over, name, False, capex,
                        staff_h + (maint if np.isfinite(maint) else 0.0)))
            inst = AWS_INSTANCES.get(key)
            if inst and key in gpus_wanted and any(
                    p.fabric_key == f"aws:{inst.instance_type}" for p in payments):
                specs.append(ClusterSpec(
                    key, g, nodes, GPUS_PER_NODE, up, fabric(inst.fabric), inst.nics,
                    inst.nic_gbits_per_s, 1.0, f"aws:{inst.instance_type}", True))
    return specs, notes


def _model(req: PlanRequest) -> ModelShape:
    if req.shape is None:
        return preset(req.model)
    s = req.shape
    try:
        return ModelShape(s.name, s.layers, s.hidden, s.ffn, s.heads, s.kv_heads, s.vocab,
                          s.seq_len, gated_mlp=s.gated_mlp)
    except ValueError as exc:
        raise InvalidInput("shape", str(exc)) from None


@dataclass(frozen=True)
class Computed:
    """The plan plus what the service learnt building it (kept for the detail views)."""

    request: PlanRequest
    as_of: date
    model: ModelShape
    plan: Plan
    notes: list[str]
    prices: list[PricePoint]


def compute_plan(session: Session, req: PlanRequest) -> Computed:
    as_of = req.as_of or datetime.now(UTC).date()
    prices = _Prices(session, as_of)
    m = _model(req)
    tr = TrainingConfig(global_batch_seqs=req.global_batch_seqs, total_tokens=req.total_tokens,
                        precision=req.precision)
    payments, notes = build_payments(prices, req)
    if not payments:
        raise InvalidInput("payments", "no requested way of paying has a price; "
                           + "; ".join(notes))
    specs, more = build_clusters(prices, req, payments)
    notes += more
    clusters = evaluate_clusters(m, tr, specs)
    notes += _cluster_notes(clusters)
    wl = Workload(req.total_tokens, req.deadline_hours, req.budget_usd,
                  req.budget_usd_per_month, req.mode, req.utilization)
    p = plan(m, wl, clusters, tuple(payments))
    if len(p) == 0:
        raise InvalidInput("gpu_types", "no way of paying matches the GPU types and fabrics")
    return Computed(req, as_of, m, p, notes + list(p.notes), list(prices.used.values()))


def _cluster_notes(c: ClusterArrays) -> list[str]:
    seen: dict[str, None] = {}
    for spec, why in zip(c.specs, c.reasons, strict=True):
        if why:
            seen[f"{spec.nodes}x{spec.gpus_per_node} {spec.gpu_key}: {why}"] = None
    return list(seen)[:10]


# --- shaping -------------------------------------------------------------------------------

def _layout(c: ClusterArrays, i: int) -> str:
    lay = {k: int(v[i]) for k, v in c.layout.items()}
    if not c.fits[i]:
        return "does not fit"
    text = f"TP{lay['tp']} PP{lay['pp']} DP{lay['dp']}"
    if lay["cp"] > 1:
        text += f" CP{lay['cp']}"
    text += f", micro-batch {lay['microbatch']}"
    if lay["interleave"] > 1:
        text += f", interleave {lay['interleave']}"
    return text


def _fin(x: float) -> float:
    return float(x) if np.isfinite(x) else -1.0


def option_out(c: Computed, k: int) -> OptionOut:
    p = c.plan
    i, j = int(p.cluster_idx[k]), int(p.payment_idx[k])
    spec, terms = p.clusters.specs[i], p.payments[j]
    rank = np.flatnonzero(p.ranked == k)
    budget = float(p.budget_usd[k])
    return OptionOut(
        id=k, rank=int(rank[0]) + 1 if len(rank) else None, gpu=spec.gpu_key,
        nodes=spec.nodes, gpus=spec.num_gpus, fabric=spec.scale_out.name,
        oversubscription=spec.oversubscription, payment=terms.key, payment_label=terms.label,
        layout=_layout(p.clusters, i), wall_hours=_fin(p.wall_hours[k]),
        cost_usd=_fin(p.cost.total_usd[k]), usd_per_1b_tokens=_fin(p.usd_per_1b_tokens[k]),
        budget_usd=budget if np.isfinite(budget) else None,
        monthly_spend_usd=_fin(monthly_spend_usd(p, k)) if np.isfinite(p.wall_hours[k])
        else -1.0,
        meets_deadline=bool(p.meets_deadline[k]), within_budget=bool(p.within_budget[k]),
        feasible=bool(p.feasible[k]), on_frontier=bool(np.isin(k, p.frontier)),
        mfu=float(p.clusters.mfu[i]), useful_fraction=float(p.useful_fraction[k]))


def option_detail(c: Computed, k: int) -> OptionDetail:
    p = c.plan
    i, j = int(p.cluster_idx[k]), int(p.payment_idx[k])
    steps = {f: float(p.clusters.steps[f][i]) for f in STEP_FIELDS}
    steps["step_time_s"] = float(p.clusters.step_time_s[i])
    cost = {"upfront_usd": _fin(p.cost.upfront_usd[k]), "hourly_usd": _fin(p.cost.held_usd[k]),
            "paid_idle_usd": _fin(p.cost.idle_usd[k]), "busy_energy_usd": _fin(p.cost.busy_usd[k]),
            "total_usd": _fin(p.cost.total_usd[k])}
    t = p.payments[j]
    terms: dict[str, float | str | bool | None] = {
        "label": t.label, "usd_per_gpu_hour": float(p.terms.usd_per_gpu_hour[k]),
        "upfront_usd_per_gpu": float(p.terms.upfront_usd_per_gpu[k]),
        "commitment_hours": t.commitment_hours,
        "billing_increment_hours": t.billing_increment_hours,
        "busy_usd_per_gpu_hour": t.busy_usd_per_gpu_hour,
        "interruption_per_node_hour": t.interruption_per_node_hour, "owned": t.owned,
        "network_capex_usd": _fin(p.clusters.specs[i].network_capex_usd) if t.owned else None}
    return OptionDetail(option=option_out(c, k), step_seconds=steps, cost_usd=cost, terms=terms)


def runner_up(p: Plan, winner: int) -> int | None:
    """The cheapest feasible option paid another way (else the next one in the ranking), so
    the comparison answers "rent or buy?" rather than "2:1 or 1:1?"."""
    others = [int(k) for k in p.ranked if int(k) != winner]
    key = p.payments[int(p.payment_idx[winner])].key
    for k in others:
        if p.payments[int(p.payment_idx[k])].key != key:
            return k
    return others[0] if others else None


COST_WORDS = {"upfront_usd": "upfront/capex share", "hourly_usd": "hourly while training",
              "paid_idle_usd": "paid while idle", "busy_energy_usd": "energy above idle"}


def _composition(d: OptionDetail) -> str:
    parts = [f"${d.cost_usd[k]:,.0f} {w}" for k, w in COST_WORDS.items() if d.cost_usd[k] > 0.5]
    return " + ".join(parts) or "$0"


def _why(c: Computed, w: int, r: int) -> list[str]:
    p = c.plan
    a, b = option_detail(c, w), option_detail(c, r)
    out = [f"{a.option.payment_label} on {a.option.gpus} {a.option.gpu} over "
           f"{a.option.fabric} costs ${a.option.cost_usd:,.0f} per run "
           f"(${a.option.usd_per_1b_tokens:,.0f} per 1B tokens) and takes "
           f"{a.option.wall_hours:,.1f} h; the runner-up, {b.option.payment_label} on "
           f"{b.option.gpus} {b.option.gpu} over {b.option.fabric}, costs "
           f"${b.option.cost_usd:,.0f} and takes {b.option.wall_hours:,.1f} h."]
    dstep = {f: b.step_seconds[f] - a.step_seconds[f] for f in STEP_FIELDS}
    big = max(dstep, key=lambda f: abs(dstep[f]))
    if a.option.gpus == b.option.gpus and abs(dstep[big]) > 1e-3:
        out.append(f"Per step the largest difference is {big.removesuffix('_s')}: "
                   f"{a.step_seconds[big]:.2f} s vs {b.step_seconds[big]:.2f} s.")
    out.append(f"Cost per run: {_composition(a)} vs {_composition(b)}.")
    if p.workload.mode == "year_of_work" and p.payments[int(p.payment_idx[w])].committed:
        out.append(f"A committed option bears its share of the commitment at "
                   f"{p.workload.utilization:.0%} utilization; idle time is paid too.")
    return out


def explanation(c: Computed) -> Explanation | None:
    p = c.plan
    if len(p.ranked) == 0:
        return None
    w = int(p.ranked[0])
    r = runner_up(p, w)
    price = None
    if r is not None:
        be = break_even_price(p, r, w)
        unit = "per GPU-hour" if be.lever == "usd_per_gpu_hour" else "capex per GPU"
        who = p.payments[int(p.payment_idx[r])].label
        sentence = (f"{who} wins if its price falls from ${be.price_now:,.2f} to "
                    f"${be.price_break_even:,.2f} {unit} ({be.change_fraction:+.1%})."
                    if be.achievable else
                    f"{who} cannot win on price alone: even at $0 {unit} it costs more.")
        price = BreakEvenPriceOut(lever=be.lever, price_now=be.price_now,
                                  price_break_even=be.price_break_even,
                                  change_fraction=be.change_fraction, achievable=be.achievable,
                                  sentence=sentence)
    return Explanation(winner=option_detail(c, w),
                       runner_up=option_detail(c, r) if r is not None else None,
                       why=_why(c, w, r) if r is not None else [],
                       runner_up_price=price, owned_vs_rented=owned_vs_rented(c))


def owned_vs_rented(c: Computed) -> BreakEvenUtilizationOut | None:
    """Break-even utilization between the cheapest owned option and the cheapest
    pay-as-you-go one, both among those meeting the deadline (else all runnable)."""
    p = c.plan
    runnable = np.isfinite(p.cost.total_usd)
    pool = runnable & p.meets_deadline if (runnable & p.meets_deadline).any() else runnable
    owned = np.array([p.payments[j].owned for j in p.payment_idx], dtype=np.bool_)
    payg = p.terms.commitment_hours == 0
    o, r = np.flatnonzero(pool & owned), np.flatnonzero(pool & payg)
    if not len(o) or not len(r):
        return None
    ko = int(o[np.argmin(p.cost.total_usd[o])])
    kr = int(r[np.argmin(p.cost.total_usd[r])])
    be = break_even_utilization(p, ko, kr)
    a, b = option_out(c, ko), option_out(c, kr)
    sentence = (f"Owning ({a.payment_label}, {a.gpus} GPUs) beats {b.payment_label} above "
                f"{be.utilization:.0%} utilization of the owned cluster."
                if be.wins_somewhere else
                f"Owning ({a.payment_label}) never beats {b.payment_label} for this run: it "
                f"would need {be.utilization:.0%} utilization.")
    return BreakEvenUtilizationOut(committed=a, rented=b, utilization=be.utilization,
                                   sentence=sentence)


def infeasible(c: Computed) -> InfeasibleOut | None:
    p = c.plan
    if len(p.ranked):
        return None
    inf = explain_infeasible(p)
    return InfeasibleOut(
        message=inf.message,
        fastest_within_budget=option_out(c, inf.fastest_within_budget)
        if inf.fastest_within_budget is not None else None,
        cheapest_meeting_deadline=option_out(c, inf.cheapest_meeting_deadline)
        if inf.cheapest_meeting_deadline is not None else None,
        deadline_needed_hours=inf.deadline_needed_hours, budget_needed_usd=inf.budget_needed_usd,
        budget_needed_usd_per_month=inf.budget_needed_usd_per_month, gpus_needed=inf.gpus_needed)


def network_what_if(session: Session, c: Computed) -> NetworkWhatIf | None:
    """Value of each fabric on the best option's cluster size, owned (buy): every fabric is
    priced with the same network capex as the reference so the saving is the speed alone;
    worth_up_to - price_now is then the extra network capex the fabric can carry."""
    p = c.plan
    pool = p.ranked if len(p.ranked) else p.by_cost
    if not len(pool):
        return None
    top = int(pool[0])
    spec = p.clusters.specs[int(p.cluster_idx[top])]
    buy = [t for t in p.payments if t.owned and t.gpu == spec.gpu_key]
    if not buy or len(c.request.fabrics) < 2:
        return None
    terms = buy[0]
    ref = next((s.network_capex_usd for s in p.clusters.specs
                if s.gpu_key == spec.gpu_key and s.nodes == spec.nodes
                and s.oversubscription == 1.0 and np.isfinite(s.network_capex_usd)), None)
    if ref is None:
        return None
    idx = [i for i, s in enumerate(p.clusters.specs)
           if s.gpu_key == spec.gpu_key and s.nodes == spec.nodes and not s.cloud_only
           and s.oversubscription == 1.0]
    if len(idx) < 2:
        return None
    sub = ClusterArrays(
        tuple(replace(p.clusters.specs[i], network_capex_usd=ref) for i in idx),
        p.clusters.fits[idx], p.clusters.tokens_per_s[idx], p.clusters.step_time_s[idx],
        p.clusters.mfu[idx], {k: v[idx] for k, v in p.clusters.layout.items()},
        {k: v[idx] for k, v in p.clusters.steps.items()},
        p.clusters.hardware_useful_fraction[idx], tuple(p.clusters.reasons[i] for i in idx))
    q = plan(c.model, p.workload, sub, (terms,))
    ok = [k for k in range(len(q)) if np.isfinite(q.cost.total_usd[k])]
    if len(ok) < 2:
        return None
    names = [q.clusters.specs[int(q.cluster_idx[k])].scale_out.name for k in ok]
    base = ok[names.index("RoCEv2 tuned")] if "RoCEv2 tuned" in names else \
        max(ok, key=lambda k: float(q.wall_hours[k]))
    values = fabric_value(q, ok, base)
    rows = [FabricValueOut(fabric=v.fabric, wall_hours=v.wall_hours, cost_usd=v.cost_usd,
                           hours_saved_per_run=v.hours_saved_per_run,
                           usd_saved_per_run=v.usd_saved_per_run, lever=v.lever,
                           price_now=v.price_now, worth_up_to=v.worth_up_to) for v in values]
    base_name = q.clusters.specs[int(q.cluster_idx[base])].scale_out.name
    ib = [v for v in values if v.fabric.startswith("InfiniBand")]
    best = max(ib or values, key=lambda v: v.usd_saved_per_run)
    sentence = (f"On {spec.nodes}x{GPUS_PER_NODE} {spec.gpu_key} bought, {best.fabric} "
                f"{'saves' if best.hours_saved_per_run >= 0 else 'loses'} "
                f"{abs(best.hours_saved_per_run):,.2f} h per run against {base_name}; at equal "
                f"network prices it is worth up to ${best.worth_up_to - best.price_now:,.0f} "
                f"more network capex over the cluster's life.")
    stored = {s.scale_out.name: s.network_capex_usd for s in p.clusters.specs
              if s.gpu_key == spec.gpu_key and s.nodes == spec.nodes and not s.cloud_only
              and s.oversubscription == 1.0 and np.isfinite(s.network_capex_usd)}
    for v in ib:
        if v.fabric in stored and base_name in stored:
            premium = stored[v.fabric] - stored[base_name]
            worth = v.worth_up_to - v.price_now
            sentence += (f" At stored switch prices an {v.fabric} network costs "
                         f"${stored[v.fabric]:,.0f} against ${stored[base_name]:,.0f} for "
                         f"{base_name} ({'a premium of' if premium >= 0 else 'a saving of'} "
                         f"${abs(premium):,.0f}), so it "
                         f"{'is' if worth >= premium else 'is not'} worth it for this run.")
    return NetworkWhatIf(cluster=f"{spec.nodes}x{GPUS_PER_NODE} {spec.gpu_key}",
                         payment=terms.label, baseline=base_name, fabrics=rows,
                         sentence=sentence,
                         rules_of_thumb=rules_of_thumb(c.model.total_params, rows))


# Seed 001: "Use InfiniBand for anything over 30B parameters ... RoCEv2 for smaller models";
# "The 10-15% throughput gain" of InfiniBand over RoCEv2; "over 70B ... at least 800Gbps per
# GPU". A rule counts as supported when the model finds at least the claimed gain (10% for
# InfiniBand; for 800 Gb/s the seed claims no figure: 5% is taken as worth a faster fabric).
IB_RULE_PARAMS, IB_RULE_GAIN = 30e9, 0.10
XDR_RULE_PARAMS, XDR_RULE_GAIN = 70e9, 0.05


def _gain(rows: dict[str, FabricValueOut], better: str, base: str) -> float | None:
    """Throughput gain of one fabric over another on the same cluster: hours_base / hours - 1
    (same tokens, same goodput model, so the ratio of run times is the ratio of speeds)."""
    if better not in rows or base not in rows or rows[better].wall_hours <= 0:
        return None
    return rows[base].wall_hours / rows[better].wall_hours - 1.0


def rules_of_thumb(total_params: float, fabrics: list[FabricValueOut]) -> list[str]:
    """The seeds' network rules tested on the what-if's own cluster and run."""
    rows = {f.fabric: f for f in fabrics}
    size = f"{total_params / 1e9:,.0f}B"
    out = []
    ib = _gain(rows, "InfiniBand NDR", "RoCEv2 tuned")
    if ib is not None:
        applies = "applies" if total_params > IB_RULE_PARAMS else "does not apply"
        verdict = "supported" if ib >= IB_RULE_GAIN else "not supported"
        text = (f"Seed rule \"InfiniBand above 30B parameters, a 10-15% gain over RoCEv2\" "
                f"({applies} to this {size} model): the model gives InfiniBand NDR "
                f"{ib:+.1%} throughput over tuned RoCEv2 here, so the claimed gain is {verdict}")
        lossy = _gain(rows, "RoCEv2 tuned", "RoCEv2 untuned")
        if lossy is not None:
            text += (f"; what matters more is tuning: tuned RoCEv2 is {lossy:+.1%} faster than "
                     "untuned (lossy) RoCEv2")
        out.append(text + ".")
    xdr = _gain(rows, "InfiniBand XDR", "InfiniBand NDR")
    if xdr is not None:
        applies = "applies" if total_params > XDR_RULE_PARAMS else "does not apply"
        verdict = "worth it" if xdr >= XDR_RULE_GAIN else "not needed"
        saved_h = rows["InfiniBand NDR"].wall_hours - rows["InfiniBand XDR"].wall_hours
        out.append(f"Seed rule \"at least 800 Gb/s per GPU above 70B parameters\" ({applies} "
                   f"to this {size} model): XDR (800 Gb/s per GPU) is {xdr:+.1%} faster than "
                   f"NDR (400 Gb/s) here, {saved_h:,.2f} h "
                   f"per run, so by a {XDR_RULE_GAIN:.0%} bar 800 Gb/s is {verdict}.")
    return out


# Seed 001 "Case Study": 32 nodes x 8 H100 SXM, NDR400, "tensor (8) x data (32)",
# "45.2% of theoretical peak throughput. Training in 41 hours."
SEED_CLAIMED_HOURS = 41.0
SEED_CLAIMED_PEAK_FRACTION = 0.452


def seed_case_check(c: Computed) -> SeedCaseCheck | None:
    """The article's own cluster through the throughput model: best layout, and the
    article's TP8 x DP32 layout (whether it fits in 80 GB at all)."""
    if c.request.model != "seed-90b" or c.request.shape is not None:
        return None
    g = gpu(gpu_keys()["H100"])
    ndr = fabric("InfiniBand NDR")
    cl = ClusterConfig(gpu=g, gpus_per_node=GPUS_PER_NODE, nodes=32, scale_up=fabric(g.scale_up),
                       scale_out=ndr, nics_per_node=NICS_PER_NODE,
                       nic_gbits_per_s=ndr.port_gbits_per_s)
    tr = TrainingConfig(global_batch_seqs=c.request.global_batch_seqs,
                        total_tokens=c.request.total_tokens, precision=c.request.precision)
    try:
        best = estimate(c.model, tr, cl)
        theirs = estimate(c.model, tr, cl, Layout(tp=8, pp=1, dp=32, microbatch=1))
    except (LayoutError, ValueError):
        return None
    lay = best.layout
    layout = f"TP{lay.tp} PP{lay.pp} DP{lay.dp}" + (f" CP{lay.cp}" if lay.cp > 1 else "") \
        + f", micro-batch {lay.microbatch}"
    hours = best.time_to_train_s / SECONDS_PER_HOUR
    fits = "fits" if theirs.fits else theirs.reason
    fp8 = (f" = {best.mfu * g.peak_bf16_tflops / g.peak_fp8_tflops:.1%} of the dense fp8 "
           "peak" if c.request.precision == "fp8" and g.peak_fp8_tflops > 0 else "")
    sentence = (f"The article's 256 H100 on NDR400 is claimed to train in 41 h at 45.2% of "
                f"peak; for {c.request.total_tokens / 1e9:,.3g}B tokens in "
                f"{c.request.precision} the model says {hours:,.1f} h at "
                f"{best.mfu:.1%} MFU (of dense bf16 peak{fp8}) with {layout}. The article's "
                f"own layout, TP8 x DP32, {fits}. {_seed_cluster_in_plan(c)}")
    return SeedCaseCheck(claimed_hours=SEED_CLAIMED_HOURS,
                         claimed_peak_fraction=SEED_CLAIMED_PEAK_FRACTION,
                         claimed_layout="TP8 DP32", model_hours=hours, model_mfu=best.mfu,
                         model_layout=layout, claimed_layout_fits=theirs.fits,
                         claimed_layout_reason=theirs.reason, sentence=sentence)


def _seed_cluster_in_plan(c: Computed) -> str:
    """Where the article's own cluster (32 x 8 H100, NDR, non-blocking) lands in this plan:
    its cheapest way of paying, and its rank against the cheapest feasible option."""
    p = c.plan
    mine = [k for k in range(len(p)) if np.isfinite(p.cost.total_usd[k])
            and (s := p.clusters.specs[int(p.cluster_idx[k])]).gpu_key == "H100"
            and s.nodes == 32 and s.scale_out.name == "InfiniBand NDR"
            and s.oversubscription == 1.0]
    if not mine:
        return "That cluster is not in this search (it needs H100, 32 nodes and NDR)."
    k = min(mine, key=lambda i: float(p.cost.total_usd[i]))
    o = option_out(c, k)
    text = (f"In this plan it is cheapest as {o.payment_label}: {o.wall_hours:,.1f} h and "
            f"${o.cost_usd:,.0f} per run (${o.usd_per_1b_tokens:,.0f} per 1B tokens)")
    if o.rank is not None:
        text += f", rank {o.rank} of {len(p.ranked)} feasible"
    else:
        text += (", which misses the " + ("deadline" if not o.meets_deadline else "budget"))
    if len(p.ranked) and int(p.ranked[0]) != k:
        w = option_out(c, int(p.ranked[0]))
        text += (f"; the cheapest feasible option, {w.gpus} {w.gpu} on {w.fabric} "
                 f"({w.payment_label}), costs ${w.cost_usd:,.0f}")
    return text + "."


def _used(point: PricePoint) -> PriceUsed:
    return PriceUsed(name=point.item.name, amount=float(point.amount),
                     unit=point.item.unit.value, source=point.source.name,
                     effective_from=point.effective_from.date())


def respond(session: Session, c: Computed) -> PlanResponse:
    p = c.plan
    shown = p.ranked[: c.request.max_options]
    try:
        net = network_what_if(session, c)
    except (ValueError, AppError):
        net = None
    return PlanResponse(
        request=c.request, as_of=c.as_of, model=c.model.name,
        total_params=float(c.model.total_params), budget_rule=p.workload.budget_rule,
        candidates=len(p), layouts_evaluated=p.clusters.layouts_evaluated,
        feasible_count=len(p.ranked), options=[option_out(c, int(k)) for k in shown],
        frontier=[option_out(c, int(k)) for k in p.frontier], explanation=explanation(c),
        infeasible=infeasible(c), network=net, seed_case=seed_case_check(c), notes=c.notes,
        prices_used=[_used(x) for x in c.prices])


def make_plan(session: Session, req: PlanRequest) -> PlanResponse:
    return respond(session, compute_plan(session, req))
