"""Answers: every option side by side, break-even utilization and month, sweeps.

Break-even utilization. For a constant utilization u every non-mixed option's present value
is affine in u: PV(u) = a + b·u (its flows are fixed costs plus per-hour charges proportional
to the hours used; options.py). Two options cost the same where a₁ + b₁u = a₂ + b₂u, i.e.
u* = (a₂ − a₁) / (b₁ − b₂), kept when 0 ≤ u* ≤ 1. a and b come from evaluating each option at
u = 0 and u = 1 — exact, because the flows are affine (a property test checks it). With a
discount rate of 0 "PV" is the plain total.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.modelling.finance.mixed import Mixed, optimal_baseline
from app.modelling.finance.money import (
    HOURS_PER_MONTH,
    FloatArray,
    IntArray,
    active_months,
    npv_usd,
    payback_month,
)
from app.modelling.finance.options import Billing, Option, Rental, option_flows, rental_flows
from app.modelling.finance.profiles import UtilizationProfile, constant


@dataclass(frozen=True)
class Scenario:
    nodes: int
    gpus_per_node: int
    profile: UtilizationProfile  # its length is the horizon in months
    annual_discount_rate: float = 0.0  # cost of capital
    goodput_fraction: float = 1.0  # useful share of used GPU-hours (from the throughput model)

    @property
    def months(self) -> int:
        return self.profile.months

    @property
    def gpu_hours_used(self) -> float:
        return float(self.nodes * self.gpus_per_node * HOURS_PER_MONTH
                     * self.profile.utilization.sum())


@dataclass(frozen=True)
class OptionOutcome:
    key: str
    monthly_usd: FloatArray
    total_usd: float
    npv_usd: float
    usd_per_gpu_hour_used: float  # NaN when no hour is used
    usd_per_useful_gpu_hour: float
    baseline_nodes: int | None = None  # mixed strategies: the cost-minimising baseline


def _stacked(rentals: Sequence[Rental], extra_axes: int = 0) -> Rental:
    """Rentals of one billing rule as one batched Rental (fields shaped (P, 1), plus
    `extra_axes` more axes of length 1)."""
    table = np.array([(r.usd_per_node_hour, r.term_months, r.upfront_usd_per_node,
                       r.hours_multiplier, r.managed_overhead_fraction, r.extras_usd_per_month)
                      for r in rentals], dtype=np.float64)
    columns: list[Any] = [table[:, i].reshape(len(rentals), 1, *([1] * extra_axes))
                          for i in range(6)]
    return Rental(rentals[0].billing, *columns)


def _all_flows(scenario: Scenario, options: Mapping[str, Option | Mixed]
               ) -> tuple[dict[str, FloatArray], dict[str, int]]:
    """Monthly flows of every option; rentals with the same billing rule in one evaluation."""
    flows: dict[str, FloatArray] = {}
    baselines: dict[str, int] = {}
    groups: dict[Billing, list[str]] = {}
    sc = scenario
    for key, option in options.items():
        if isinstance(option, Rental):
            groups.setdefault(option.billing, []).append(key)
        elif isinstance(option, Mixed):
            best = optimal_baseline(option, sc.nodes, sc.gpus_per_node, sc.profile, sc.months,
                                    sc.annual_discount_rate)
            flows[key], baselines[key] = best.monthly_usd, best.baseline_nodes
        else:
            flows[key] = option_flows(option, sc.nodes, sc.gpus_per_node, sc.profile, sc.months)
    for keys in groups.values():
        rentals = [options[k] for k in keys]
        batch = rental_flows(_stacked([r for r in rentals if isinstance(r, Rental)]), sc.nodes,
                             sc.profile, sc.months)
        flows |= {k: batch[i] for i, k in enumerate(keys)}
    return flows, baselines


def compare(scenario: Scenario, options: Mapping[str, Option | Mixed]) -> list[OptionOutcome]:
    """Every option's flows, totals, NPV and cost per GPU-hour, in the order given."""
    flows, baselines = _all_flows(scenario, options)
    keys = list(options)
    matrix = np.stack([flows[k] for k in keys])
    totals = matrix.sum(axis=1)
    npvs = npv_usd(matrix, scenario.annual_discount_rate)
    used = scenario.gpu_hours_used
    per_used = totals / used if used > 0 else np.full(len(keys), np.nan)
    return [OptionOutcome(k, flows[k], float(totals[i]), float(npvs[i]), float(per_used[i]),
                          float(per_used[i]) / scenario.goodput_fraction, baselines.get(k))
            for i, k in enumerate(keys)]


def affine_coefficients(option: Option, nodes: int, gpus_per_node: int,
                        horizon: int | IntArray, annual_rate: float,
                        max_months: int | None = None) -> tuple[FloatArray, FloatArray]:
    """(a, b) with PV(u) = a + b·u at constant utilization u; vectorized over horizons and
    over batched (array-valued) option fields."""
    months = max_months or int(np.max(horizon))
    zero = npv_usd(option_flows(option, nodes, gpus_per_node, constant(0.0, months), horizon),
                   annual_rate)
    full = npv_usd(option_flows(option, nodes, gpus_per_node, constant(1.0, months), horizon),
                   annual_rate)
    return zero, np.asarray(full - zero)


def break_even_utilization(a1: FloatArray, b1: FloatArray, a2: FloatArray,
                           b2: FloatArray) -> FloatArray:
    """u* = (a₂ − a₁)/(b₁ − b₂) where it lies in [0, 1]; NaN where the lines do not cross
    there (one option is cheaper at every utilization) or are parallel."""
    slope = np.asarray(b1 - b2, dtype=np.float64)
    gap = np.asarray(a2 - a1, dtype=np.float64)
    u = np.divide(gap, slope, out=np.full(np.broadcast(gap, slope).shape, np.nan),
                  where=slope != 0)
    return np.where((u >= 0.0) & (u <= 1.0), u + 0.0, np.nan)  # + 0.0: no "−0.0"


@dataclass(frozen=True)
class PairAnswer:
    first: str
    second: str
    break_even_utilization: float  # NaN: no crossing in [0, 1]
    first_cheaper_above: bool  # at utilizations above u*, `first` costs less
    payback_month: float  # first month from which `first` stays cumulatively cheaper; NaN


def pair_answers(scenario: Scenario, options: Mapping[str, Option],
                 outcomes: Mapping[str, OptionOutcome],
                 pairs: Sequence[tuple[str, str]]) -> list[PairAnswer]:
    """Break-even utilization and payback month of each pair, all pairs at once."""
    if not pairs:
        return []
    keys = list(dict.fromkeys(k for pair in pairs for k in pair))
    a, b = affine_table([options[k] for k in keys], scenario.nodes, scenario.gpus_per_node,
                        np.array([scenario.months]), scenario.annual_discount_rate)
    row = {k: i for i, k in enumerate(keys)}
    firsts = [row[f] for f, _ in pairs]
    seconds = [row[s] for _, s in pairs]
    u = break_even_utilization(a[firsts, 0], b[firsts, 0], a[seconds, 0], b[seconds, 0])
    payback = payback_month(np.stack([outcomes[f].monthly_usd for f, _ in pairs]),
                            np.stack([outcomes[s].monthly_usd for _, s in pairs]))
    return [PairAnswer(f, s, float(u[i]), bool(b[row[f], 0] < b[row[s], 0]), float(payback[i]))
            for i, (f, s) in enumerate(pairs)]


def affine_table(options: Sequence[Option], nodes: int, gpus_per_node: int,
                 horizons: IntArray, annual_rate: float) -> tuple[FloatArray, FloatArray]:
    """(a, b), each shaped (O, H), with PV = a + b·u at constant utilization u for every
    option and horizon. Two evaluations per owned option and per billing rule (rentals are
    batched), each over all horizons at once."""
    months = int(np.max(horizons))
    a = np.empty((len(options), len(horizons)))
    b = np.empty_like(a)
    groups: dict[Billing, list[int]] = {}
    for i, option in enumerate(options):
        if isinstance(option, Rental):
            groups.setdefault(option.billing, []).append(i)
        else:
            a[i], b[i] = affine_coefficients(option, nodes, gpus_per_node, horizons,
                                             annual_rate, months)
    for rows in groups.values():
        rentals = [o for o in (options[i] for i in rows) if isinstance(o, Rental)]
        # Fields (P, 1, 1) against horizons (H,) give flows (P, H, M).
        batch = _stacked(rentals, extra_axes=1)
        a[rows], b[rows] = affine_coefficients(batch, nodes, gpus_per_node, horizons,
                                               annual_rate, months)
    return a, b


def sweep_pv_usd(options: Sequence[Option], nodes: int, gpus_per_node: int,
                 utilizations: FloatArray, horizons: IntArray,
                 annual_rate: float) -> FloatArray:
    """PV of every option × utilization × horizon, shape (O, U, H): one broadcast over the
    affine coefficients evaluates all O·U·H scenarios. Exact, because PV is affine in a
    constant utilization (tested)."""
    a, b = affine_table(options, nodes, gpus_per_node, horizons, annual_rate)
    return np.asarray(a[:, None, :] + b[:, None, :] * np.asarray(utilizations)[None, :, None])


def gpu_hours_used(nodes: int, gpus_per_node: int, utilizations: FloatArray,
                   horizons: IntArray) -> FloatArray:
    """GPU-hours used for a (U, H) grid of constant utilizations and horizons."""
    hours = active_months(horizons, int(np.max(horizons))).sum(axis=-1) * HOURS_PER_MONTH
    return np.asarray(nodes * gpus_per_node * np.outer(utilizations, hours))
