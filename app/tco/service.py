"""TCO use case: resolve prices as of a date, run the finance model, shape the answer."""

from datetime import UTC, datetime
from math import ceil

from sqlalchemy.orm import Session

from app.modelling.finance.network import two_tier_fabric
from app.modelling.finance.tco import (
    HOURS_PER_MONTH,
    CloudRates,
    ClusterShape,
    OwnedCosts,
    compare,
)
from app.pricing.models import PriceKind, PricePoint, PurchaseOption
from app.pricing.service import require_price
from app.tco.schemas import OptionResult, PriceUsed, TcoRequest, TcoResponse

GPUS_PER_NODE = 8
NICS_PER_NODE = 8  # one 400 Gb/s port per GPU (rail-optimized, as in DGX/HGX reference designs)
SWITCH_RADIX = 64  # Quantum-2 QM9700/QM9790: 64 NDR ports
STAFF_FTE_PER_64_NODES = 1.0  # seed 000: one dedicated ops person for 8 nodes, scaled at ≥64


def _used(point: PricePoint) -> PriceUsed:
    return PriceUsed(name=point.item.name, amount=float(point.amount), unit=point.item.unit.value,
                     source=point.source.name, effective_from=point.effective_from.date())


def compute_tco(session: Session, req: TcoRequest) -> TcoResponse:
    as_of = req.as_of or datetime.now(UTC).date()
    eq = PriceKind.equipment

    def price(field: str, **filters: object) -> PricePoint:
        return require_price(session, as_of, field, **filters)

    gpu = price("gpu_model", kind=eq, category="gpu", gpu_model=req.gpu_model)
    server = price("gpu_model", kind=eq, category="server", gpu_count=GPUS_PER_NODE)
    switch = price("nodes", kind=eq, category="ib_switch")
    kit = price("nodes", kind=eq, category="node_network_kit")
    idle = price("nodes", kind=PriceKind.facility, category="idle_power_fraction")
    pue = price("nodes", kind=PriceKind.facility, category="pue")
    power = price("region", kind=PriceKind.electricity, region="us")
    staff = price("nodes", kind=PriceKind.staff, region="us")
    cloud = {"kind": PriceKind.cloud_instance, "provider": "aws", "region": req.region,
             "gpu_model": req.gpu_model}
    od = price("gpu_model", **cloud, purchase_option=PurchaseOption.on_demand)
    ri = price("gpu_model", **cloud, purchase_option=PurchaseOption.reserved, term_months=12)

    cluster = ClusterShape(req.nodes, GPUS_PER_NODE)
    fabric = two_tier_fabric(req.nodes * NICS_PER_NODE, SWITCH_RADIX)
    busy_kw = float(server.item.power_w or 0) / 1000.0
    staff_fte = max(1, ceil(req.nodes / 64 * STAFF_FTE_PER_64_NODES))
    owned = OwnedCosts(
        gpu_usd_each=float(gpu.amount),
        server_usd_per_node=float(server.amount),
        network_usd_per_node=(fabric.switches * float(switch.amount)) / req.nodes
        + float(kit.amount),
        power_busy_kw_per_node=busy_kw,
        power_idle_kw_per_node=busy_kw * float(idle.amount),
        electricity_usd_per_kwh=float(power.amount),
        pue=float(pue.amount),
        staff_usd_per_year=staff_fte * float(staff.amount),
    )
    rates = CloudRates(
        on_demand_usd_per_hour=float(od.amount),
        reserved_usd_per_hour=float(ri.amount),
        reserved_upfront_usd=float(ri.upfront_usd or 0),
        reserved_term_months=ri.item.term_months or 12,
    )
    flows = compare(cluster, owned, rates, req.months, req.utilization)
    gpu_hours_used = cluster.gpus * req.utilization * HOURS_PER_MONTH * req.months
    options = [
        OptionResult(
            key=f.key, label=f.label, total_usd=f.total_usd,
            usd_per_gpu_hour_used=f.total_usd / gpu_hours_used if gpu_hours_used else None,
            monthly_usd=f.monthly_usd.tolist(), cumulative_usd=f.cumulative_usd.tolist(),
        )
        for f in flows
    ]
    return TcoResponse(
        request=req, as_of=as_of, gpus=cluster.gpus, gpu_hours_used=gpu_hours_used,
        options=options, cheapest=min(options, key=lambda o: o.total_usd).key,
        prices_used=[_used(p) for p in (gpu, server, switch, kit, idle, pue, power, staff, od, ri)],
        assumptions={"switches": fabric.switches, "staff_fte": staff_fte,
                     "power_busy_kw_per_node": busy_kw, "hours_per_month": HOURS_PER_MONTH},
    )
