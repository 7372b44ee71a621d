"""Mixed strategies: own or reserve a baseline of b nodes, rent the peak by the hour.

In month m the workload needs node_fraction[m] × N nodes during busy_fraction[m] of the hours
(profiles.py). The baseline serves min(b, demand) of them; the peak, max(demand − b, 0),
is rented for those hours. The baseline's fixed costs are paid whatever happens.

Cost-minimising baseline: for a rented (committed) baseline the total is convex and piecewise
linear in b with kinks where b crosses a month's demand, so the optimum is one of those
demands (the newsvendor argument: add a baseline node while the peak hours it saves are worth
more than its fixed cost); every kink ⌊d⌋, ⌈d⌉, 0 and N are evaluated at once. Owned
baselines add step costs (switches, racks, staff), so a 33-point grid joins the candidates.
"""

from dataclasses import dataclass

import numpy as np

from app.modelling.finance.money import FloatArray, active_months, npv_usd
from app.modelling.finance.options import Billing, Option, Rental, option_flows, rental_flows
from app.modelling.finance.profiles import UtilizationProfile


@dataclass(frozen=True)
class Mixed:
    baseline: Option
    peak: Rental  # billed per used hour (on-demand or spot)


@dataclass(frozen=True)
class MixedResult:
    baseline_nodes: int
    monthly_usd: FloatArray
    candidates_nodes: FloatArray  # baselines evaluated
    candidates_npv_usd: FloatArray


def mixed_flows(option: Mixed, nodes: int, gpus_per_node: int, profile: UtilizationProfile,
                horizon: int, baseline_nodes: FloatArray | int) -> FloatArray:
    """Flows for baseline(s) of `baseline_nodes` (scalar, or shape (K, 1) for K at once)."""
    b = np.asarray(baseline_nodes, dtype=np.float64)
    demand = profile.node_fraction * nodes
    on_base, on_peak = np.minimum(b, demand), np.maximum(demand - b, 0.0)
    baseline, rented_base = option.baseline, isinstance(option.baseline, Rental)
    if isinstance(baseline, Rental):
        base = _rented_linear(baseline, b, on_base, profile, horizon)
    else:
        base_fraction = np.divide(on_base, b, out=np.zeros(np.broadcast(on_base, b).shape),
                                  where=b > 0)
        base = option_flows(baseline, b, gpus_per_node, profile.scaled_nodes(base_fraction),
                            horizon)
    peak = _rented_linear(option.peak, float(nodes), on_peak, profile, horizon)
    # Cloud extras (storage, egress) are paid once, in months where any cloud capacity is used.
    in_cloud = (on_peak * profile.busy_fraction > 0) | (rented_base & (b > 0))
    extras = option.peak.extras_usd_per_month * in_cloud * active_months(horizon, profile.months)
    return np.asarray(base + peak + extras)


def _rented_linear(rental: Rental, nodes: FloatArray | float, busy_nodes: FloatArray,
                   profile: UtilizationProfile, horizon: int) -> FloatArray:
    """A rental's flows (without extras) for `nodes` nodes of which `busy_nodes` work, per
    month. Rental charges are linear: committed ones in the nodes held, the others in the
    nodes busy; so one evaluation for a single node, scaled, serves every candidate."""
    ones = np.ones(profile.months)
    per_node = rental_flows(rental, 1, profile.scaled_nodes(ones), horizon, False)
    scale = nodes if rental.billing is Billing.committed else busy_nodes
    return np.asarray(np.multiply(scale, per_node))


def baseline_candidates(nodes: int, profile: UtilizationProfile, grid: bool) -> FloatArray:
    """Every month's demand rounded down and up, 0 and N; plus a 33-point grid if `grid`."""
    demand = profile.node_fraction * nodes
    seen = np.zeros(nodes + 1, dtype=bool)  # node counts are whole: a mask de-duplicates fast
    seen[[0, nodes]] = True
    seen[np.floor(demand).astype(np.int64)] = True
    seen[np.ceil(demand).astype(np.int64)] = True
    if grid:
        seen[np.round(np.arange(33) * (nodes / 32.0)).astype(np.int64)] = True
    return np.flatnonzero(seen).astype(np.float64)


def optimal_baseline(option: Mixed, nodes: int, gpus_per_node: int,
                     profile: UtilizationProfile, horizon: int,
                     annual_rate: float) -> MixedResult:
    """The baseline node count with the lowest NPV, all candidates in one evaluation."""
    candidates = baseline_candidates(nodes, profile, grid=not isinstance(option.baseline, Rental))
    flows = mixed_flows(option, nodes, gpus_per_node, profile, horizon, candidates[:, None])
    npvs = npv_usd(flows, annual_rate)
    best = int(np.argmin(npvs))
    return MixedResult(int(candidates[best]), flows[best], candidates, npvs)
