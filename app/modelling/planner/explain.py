"""What would change the answer: break-even prices and utilizations, and, for an infeasible
request, what is closest and what would make it feasible.

Cost is linear in each payment's hourly rate and in its upfront price per GPU (payment.py:
total = upfront_coeff x upfront + rate_coeff x rate + busy energy), so every break-even is a
closed-form solve, not a chart reading.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.modelling.finance.money import HOURS_PER_MONTH
from app.modelling.planner.search import Plan


@dataclass(frozen=True)
class BreakEvenPrice:
    """The price of `challenger` at which it costs exactly what `incumbent` costs.

    lever: "usd_per_gpu_hour" (rented, reserved) or "upfront_usd_per_gpu" (owned capex).
    price_now, price_break_even in that lever's unit; change_fraction = break-even / now - 1.
    achievable is False when even a price of zero would not close the gap."""

    challenger: int
    incumbent: int
    lever: str
    price_now: float
    price_break_even: float
    change_fraction: float
    achievable: bool


def break_even_price(p: Plan, challenger: int, incumbent: int) -> BreakEvenPrice:
    """Solve cost_challenger(price) = cost_incumbent for the challenger's headline price."""
    terms = p.payments[int(p.payment_idx[challenger])]
    gap = float(p.cost.total_usd[challenger] - p.cost.total_usd[incumbent])
    if terms.owned:
        lever = "upfront_usd_per_gpu"
        now = float(p.terms.upfront_usd_per_gpu[challenger])
        slope = float(p.cost.upfront_coeff[challenger])
    else:
        lever = "usd_per_gpu_hour"
        now = float(p.terms.usd_per_gpu_hour[challenger])
        slope = float(p.cost.rate_coeff[challenger])
    target = now - gap / slope if slope > 0 else float("nan")
    change = target / now - 1.0 if now > 0 else float("nan")
    return BreakEvenPrice(challenger, incumbent, lever, now, target, change,
                          bool(np.isfinite(target) and target >= 0))


@dataclass(frozen=True)
class BreakEvenUtilization:
    """Utilization u* at which a committed option (owned or reserved) costs per run what a
    pay-as-you-go option does: committed cost per run = A / u + B (A: the commitment's share
    at u = 1, B: busy energy), rented = R, so u* = A / (R - B). Above u* the committed option
    wins. u* > 1 means it never wins; the answer holds each option's own run time."""

    committed: int
    rented: int
    utilization: float
    wins_somewhere: bool


def break_even_utilization(p: Plan, committed: int, rented: int) -> BreakEvenUtilization:
    t, k = p.terms, committed
    c = float(t.commitment_hours[k])
    if c <= 0:
        raise ValueError("the first option must be committed (owned or reserved)")
    g, w = float(p.gpus[k]), float(p.wall_hours[k])
    block = float(t.upfront_usd_per_gpu[k] + t.usd_per_gpu_hour[k] * c)
    a = g * block * w / c
    b = g * float(t.busy_usd_per_gpu_hour[k]) * w
    r = float(p.cost.total_usd[rented])
    u = a / (r - b) if r > b else float("inf")
    return BreakEvenUtilization(committed, rented, u, bool(u <= 1.0))


@dataclass(frozen=True)
class Infeasibility:
    """Why nothing is feasible and what would change that.

    fastest_within_budget / cheapest_meeting_deadline: candidate indices (None if none).
    deadline_needed_hours: the deadline the fastest in-budget option needs.
    budget_needed_usd: the run budget the cheapest on-time option needs (and per month under
    a monthly budget). gpus_needed: when nothing meets the deadline at any size, the GPUs the
    fastest cluster would need at linear scaling (a lower bound: scaling is sub-linear)."""

    fastest_within_budget: int | None
    cheapest_meeting_deadline: int | None
    deadline_needed_hours: float | None
    budget_needed_usd: float | None
    budget_needed_usd_per_month: float | None
    gpus_needed: int | None
    message: str


def explain_infeasible(p: Plan) -> Infeasibility:
    runnable = np.isfinite(p.cost.total_usd)
    in_budget = np.flatnonzero(runnable & p.within_budget)
    on_time = np.flatnonzero(runnable & p.meets_deadline)
    fastest = int(in_budget[np.argmin(p.wall_hours[in_budget])]) if len(in_budget) else None
    cheapest = int(on_time[np.argmin(p.cost.total_usd[on_time])]) if len(on_time) else None
    wl = p.workload
    deadline = float(p.wall_hours[fastest]) if fastest is not None else None
    budget = float(p.cost.total_usd[cheapest]) if cheapest is not None else None
    per_month = None
    if budget is not None and cheapest is not None and wl.budget_usd_per_month is not None:
        per_month = wl.budget_usd_per_month * budget / float(p.budget_usd[cheapest])
    gpus = None
    msgs = []
    if deadline is not None:
        msgs.append(f"the fastest option within budget needs {deadline:,.1f} h "
                    f"(deadline {wl.deadline_hours:,.1f} h)")
    else:
        msgs.append("no option is within budget")
    if budget is not None:
        text = f"the cheapest option that meets the deadline costs ${budget:,.0f} per run"
        if per_month is not None:
            text += f" (a monthly budget of ${per_month:,.0f})"
        msgs.append(text)
    elif runnable.any():
        k = int(np.flatnonzero(runnable)[np.argmin(p.wall_hours[runnable])])
        gpus = int(np.ceil(p.gpus[k] * p.wall_hours[k] / wl.deadline_hours))
        msgs.append(f"nothing searched meets the deadline: the fastest takes "
                    f"{p.wall_hours[k]:,.1f} h on {int(p.gpus[k])} GPUs, so at least {gpus} "
                    "GPUs are needed even at perfect scaling")
    else:
        msgs.append("no cluster searched can hold the model: add GPUs or memory")
    text = "; ".join(msgs) + "."
    return Infeasibility(fastest, cheapest, deadline, budget, per_month, gpus,
                         text[0].upper() + text[1:])


def monthly_spend_usd(p: Plan, idx: int) -> float:
    """Spend per month if runs repeat back to back at the workload's utilization
    (year of work) or once per month (single run)."""
    w = float(p.wall_hours[idx])
    c = float(p.cost.total_usd[idx])
    if p.workload.mode == "single_run":
        return c / max(float(np.ceil(w / HOURS_PER_MONTH - 1e-9)), 1.0)
    return c * p.workload.utilization * HOURS_PER_MONTH / w
