"""Network what-if: is a better scale-out fabric worth its price on this cluster?

For one cluster size and one way of paying, each fabric is compared with a baseline fabric:
hours and dollars saved per run (the run cost already carries each fabric's own network
capex for owned builds), and the most the better fabric could cost and still tie with the
baseline -- for an owned build the network capex, for a rental the hourly rate per GPU.
Linear solve, as in explain.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.modelling.planner.search import Plan


@dataclass(frozen=True)
class FabricValue:
    """One fabric against the baseline (positive savings = better than the baseline).

    worth_up_to: network capex in USD (owned) or USD per GPU-hour (rented) at which this
    fabric costs per run exactly what the baseline does; price_now is the same quantity today.
    """

    candidate: int
    baseline: int
    fabric: str
    wall_hours: float
    cost_usd: float
    hours_saved_per_run: float
    usd_saved_per_run: float
    lever: str  # "network_capex_usd" | "usd_per_gpu_hour"
    price_now: float
    worth_up_to: float


def fabric_value(p: Plan, candidates: list[int], baseline: int) -> tuple[FabricValue, ...]:
    """Compare each candidate (same size and payment, another fabric) with the baseline."""
    out = []
    base_cost = float(p.cost.total_usd[baseline])
    for k in candidates:
        spec = p.clusters.specs[int(p.cluster_idx[k])]
        terms = p.payments[int(p.payment_idx[k])]
        cost = float(p.cost.total_usd[k])
        saved = base_cost - cost
        if terms.owned:
            lever, now = "network_capex_usd", spec.network_capex_usd
            slope = float(p.cost.upfront_coeff[k] / p.gpus[k])  # d cost / d network capex
        else:
            lever, now = "usd_per_gpu_hour", float(p.terms.usd_per_gpu_hour[k])
            slope = float(p.cost.rate_coeff[k])
        worth = now + saved / slope if slope > 0 else float("nan")
        out.append(FabricValue(
            k, baseline, spec.scale_out.name
            + ("" if spec.oversubscription == 1 else f" {spec.oversubscription:g}:1"),
            float(p.wall_hours[k]), cost,
            float(p.wall_hours[baseline] - p.wall_hours[k]), saved, lever, now, worth))
    return tuple(out)
