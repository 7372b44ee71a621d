"""The joint search: every (cluster, way of paying) pair, costed in one numpy evaluation.

Time to train = tokens / (tokens/s of the best layout x useful fraction), where the useful
fraction is the throughput model's goodput (hardware failures, checkpoints, restarts) with
spot interruptions added to the failure rate. Cost: payment.run_cost.

Budget rule (stated in every answer):
- budget_usd is a total for one run;
- budget_usd_per_month: a single run may spend the budget of every calendar month it touches,
  ceil(W / 730 h) months (at least one); in a year of work at utilization u, each run occupies
  W / u hours of the calendar, so it may spend budget x W / (u x 730 h) -- equivalently the
  monthly spend (cost per run x runs per month) stays within the monthly budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from app.modelling.finance.money import HOURS_PER_MONTH
from app.modelling.planner.clusters import (
    ClusterArrays,
    useful_fraction_with_interruptions,
)
from app.modelling.planner.payment import (
    BoolArray,
    CostParts,
    FloatArray,
    Mode,
    PaymentArrays,
    PaymentTerms,
    run_cost,
)
from app.modelling.throughput import FailureConfig, ModelShape

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Workload:
    """What is bought: total_tokens trained within deadline_hours, within a budget."""

    total_tokens: float
    deadline_hours: float
    budget_usd: float | None = None
    budget_usd_per_month: float | None = None
    mode: Mode = "single_run"
    utilization: float = 1.0  # year of work: busy share of an owned/reserved cluster

    def __post_init__(self) -> None:
        if self.total_tokens <= 0 or self.deadline_hours <= 0:
            raise ValueError("tokens and deadline must be positive")
        if not 0 < self.utilization <= 1:
            raise ValueError("utilization must be in (0, 1]")

    def budget_for_run(self, wall_h: FloatArray) -> FloatArray:
        """Dollars one run of wall_h hours may spend (module docstring); inf = no budget."""
        allowed = np.full(wall_h.shape, np.inf)
        if self.budget_usd is not None:
            allowed = np.minimum(allowed, self.budget_usd)
        if self.budget_usd_per_month is not None:
            w = np.where(np.isfinite(wall_h), wall_h, 0.0)
            if self.mode == "single_run":
                months = np.maximum(np.ceil(w / HOURS_PER_MONTH - 1e-9), 1.0)
            else:
                months = w / (self.utilization * HOURS_PER_MONTH)
            allowed = np.minimum(allowed, self.budget_usd_per_month * months)
        return allowed

    @property
    def budget_rule(self) -> str:
        parts = []
        if self.budget_usd is not None:
            parts.append(f"at most ${self.budget_usd:,.0f} per run")
        if self.budget_usd_per_month is not None:
            if self.mode == "single_run":
                parts.append(f"${self.budget_usd_per_month:,.0f} per calendar month the run "
                             "touches (ceil(hours / 730), at least one month)")
            else:
                parts.append(f"${self.budget_usd_per_month:,.0f} per month of spend: cost per "
                             f"run x runs per month at {self.utilization:.0%} utilization")
        return "; ".join(parts) or "no budget"


@dataclass(frozen=True)
class Plan:
    """Every (cluster, payment) candidate; arrays over candidates. `ranked` lists feasible
    candidates cheapest first; `frontier` the time-vs-cost Pareto-optimal ones, fastest
    first. Candidates whose cluster has no fitting layout have infinite hours and cost."""

    workload: Workload
    clusters: ClusterArrays
    payments: tuple[PaymentTerms, ...]
    cluster_idx: IntArray
    payment_idx: IntArray
    gpus: FloatArray
    terms: PaymentArrays  # effective per-candidate terms (owned: incl. network and staff)
    useful_fraction: FloatArray
    wall_hours: FloatArray
    cost: CostParts
    usd_per_1b_tokens: FloatArray
    budget_usd: FloatArray  # what this run may spend under the budget rule
    meets_deadline: BoolArray
    within_budget: BoolArray
    feasible: BoolArray
    ranked: IntArray
    frontier: IntArray
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return int(self.cluster_idx.shape[0])

    @property
    def by_cost(self) -> IntArray:
        """All runnable candidates cheapest first (feasible or not)."""
        ok = np.flatnonzero(np.isfinite(self.cost.total_usd))
        return ok[np.lexsort((self.wall_hours[ok], self.cost.total_usd[ok]))].astype(np.int64)


def pair(clusters: ClusterArrays, payments: tuple[PaymentTerms, ...]
         ) -> tuple[IntArray, IntArray]:
    """(cluster, payment) index pairs a buyer could actually sign: the payment's GPU type
    matches, a cloud offer only with the fabric it comes with (non-blocking), an owned payment
    only on buyer-built fabrics (and owned only where the network has a price)."""
    ci: list[int] = []
    pi: list[int] = []
    for j, p in enumerate(payments):
        for i, s in enumerate(clusters.specs):
            if s.gpu_key != p.gpu:
                continue
            if p.fabric_key is None:
                if s.cloud_only or (p.owned and not np.isfinite(s.network_capex_usd)):
                    continue
            elif p.fabric_key != s.fabric_key or (not s.cloud_only
                                                  and s.oversubscription != 1.0):
                continue  # a provider's fabric comes as built: non-blocking
            ci.append(i)
            pi.append(j)
    return np.array(ci, dtype=np.int64), np.array(pi, dtype=np.int64)


def pareto_front(hours: FloatArray, cost: FloatArray) -> IntArray:
    """Indices of the candidates no other beats on both time and cost, fastest first
    (sort by hours then cost; keep each one cheaper than every faster one)."""
    ok = np.flatnonzero(np.isfinite(hours) & np.isfinite(cost))
    order = ok[np.lexsort((cost[ok], hours[ok]))]
    c = cost[order]
    best_before = np.concatenate(([np.inf], np.minimum.accumulate(c)[:-1]))
    return order[c < best_before].astype(np.int64)


def _useful(m: ModelShape, clusters: ClusterArrays, payments: tuple[PaymentTerms, ...],
            ci: IntArray, pi: IntArray, failures: FailureConfig | None) -> FloatArray:
    """Hardware goodput per cluster, replaced by the spot-inclusive one where the payment is
    interruptible (one vectorised call over those candidates)."""
    useful = clusters.hardware_useful_fraction[ci].copy()
    rates = np.array([p.interruption_per_node_hour for p in payments], dtype=np.float64)[pi]
    k = np.flatnonzero((rates > 0) & clusters.fits[ci])
    if len(k):
        per_node = np.array([s.gpus_per_node for s in clusters.specs], dtype=np.float64)
        useful[k] = useful_fraction_with_interruptions(
            m, clusters.gpus[ci[k]], per_node[ci[k]], rates[k], failures)
    return useful


def plan(m: ModelShape, workload: Workload, clusters: ClusterArrays,
         payments: tuple[PaymentTerms, ...], failures: FailureConfig | None = None) -> Plan:
    """Cost every compatible (cluster, payment) pair, mark the feasible ones, rank them by
    cost and find the Pareto frontier of time vs cost."""
    ci, pi = pair(clusters, payments)
    useful = _useful(m, clusters, payments, ci, pi, failures)
    tps = clusters.tokens_per_s[ci] * useful
    wall_h = np.full(tps.shape, np.inf)
    np.divide(workload.total_tokens / 3600.0, tps, out=wall_h, where=tps > 0)
    pay = PaymentArrays.of(payments).take(pi)
    owned = np.array([p.owned for p in payments], dtype=np.bool_)[pi]
    net = np.array([s.network_capex_usd for s in clusters.specs])[ci]
    gpus = clusters.gpus[ci]
    fixed = np.array([s.owned_fixed_usd_per_hour for s in clusters.specs])[ci]
    # An owned build also buys its scale-out network (capex joins the upfront per GPU) and
    # pays the cluster-wide running costs (staff), spread per GPU-hour.
    pay = PaymentArrays(pay.usd_per_gpu_hour + np.where(owned, fixed / gpus, 0.0),
                        pay.upfront_usd_per_gpu + np.where(owned, net / gpus, 0.0),
                        pay.commitment_hours, pay.billing_increment_hours,
                        pay.busy_usd_per_gpu_hour)
    cost = run_cost(gpus, wall_h, pay, workload.mode, workload.utilization)
    per_1b = cost.total_usd / (workload.total_tokens / 1e9)
    budget = workload.budget_for_run(wall_h)
    meets = wall_h <= workload.deadline_hours
    within = cost.total_usd <= budget
    feasible = meets & within & np.isfinite(cost.total_usd)
    f = np.flatnonzero(feasible)
    ranked = f[np.lexsort((wall_h[f], cost.total_usd[f]))].astype(np.int64)
    return Plan(workload, clusters, payments, ci, pi, gpus, pay, useful, wall_h, cost, per_1b,
                budget, meets, within, feasible, ranked, pareto_front(wall_h, cost.total_usd),
                clusters.notes)
