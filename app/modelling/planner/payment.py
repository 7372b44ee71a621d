"""Ways of paying for a cluster and what one training run costs under each.

A way of paying is described per GPU, so one set of terms prices any GPU count:

- pay-as-you-go (commitment_hours == 0: on-demand, spot, capacity blocks, GPU clouds):
  cost = G x (upfront + rate x roundup(W, increment))   (AWS EC2 on-demand is billed per
  second, capacity blocks per 24-hour block: AWS "Capacity Blocks for ML" user guide);
- committed (reserved term, or an owned cluster over its depreciation life C hours): the whole
  commitment is paid whether the run takes 2 days or 20 (AWS "Reserved Instances" billing:
  every hour of the term is billed). Per run:
    single run:        G x (upfront + rate x C) x ceil(W / C)
    year of work at u: G x (upfront + rate x C) x W / (u x C)
      (a queue of runs keeps the cluster busy a fraction u of the time; each run bears its
      share of the busy time and the idle time is spread over the busy runs);
  plus, for owned clusters, busy_usd_per_gpu_hour x W: the energy drawn above idle while
  training (the only running cost that follows utilization; kW x PUE x $/kWh).

Units: hours, US dollars, per GPU unless the name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Mode = Literal["single_run", "year_of_work"]

# Round-up guard: 48.0000000001 h of float noise must not bill a 49th hour.
_EPS = 1e-9


@dataclass(frozen=True)
class PaymentTerms:
    """One way of paying for one GPU type; see the module docstring for the cost formulas.

    usd_per_gpu_hour is what a held GPU costs per hour: the on-demand/spot/block rate, the
    reserved recurring rate, or for an owned cluster its running cost while held (idle power x
    PUE, colocation, staff, maintenance). upfront_usd_per_gpu is paid once per commitment
    (owned: capex per GPU with its server and network share, net of resale; reserved: the
    upfront fee). interruption_per_node_hour is the spot reclaim rate (0 elsewhere).
    fabric_key: None means the buyer picks the scale-out fabric (owned, colocated); a cloud
    offer names the only fabric it comes with.
    """

    key: str
    label: str
    gpu: str
    usd_per_gpu_hour: float
    upfront_usd_per_gpu: float = 0.0
    commitment_hours: float = 0.0
    billing_increment_hours: float = 1.0
    interruption_per_node_hour: float = 0.0
    busy_usd_per_gpu_hour: float = 0.0
    owned: bool = False
    fabric_key: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if min(self.usd_per_gpu_hour, self.upfront_usd_per_gpu, self.commitment_hours,
               self.interruption_per_node_hour, self.busy_usd_per_gpu_hour) < 0:
            raise ValueError(f"{self.key}: prices, hours and rates must be >= 0")
        if self.billing_increment_hours <= 0:
            raise ValueError(f"{self.key}: billing increment must be > 0 hours")

    @property
    def committed(self) -> bool:
        return self.commitment_hours > 0


@dataclass(frozen=True)
class PaymentArrays:
    """Payment terms gathered per candidate (all arrays of one shape)."""

    usd_per_gpu_hour: FloatArray
    upfront_usd_per_gpu: FloatArray
    commitment_hours: FloatArray
    billing_increment_hours: FloatArray
    busy_usd_per_gpu_hour: FloatArray

    @staticmethod
    def of(terms: list[PaymentTerms] | tuple[PaymentTerms, ...]) -> PaymentArrays:
        def a(name: str) -> FloatArray:
            return np.array([float(getattr(t, name)) for t in terms], dtype=np.float64)
        return PaymentArrays(a("usd_per_gpu_hour"), a("upfront_usd_per_gpu"),
                             a("commitment_hours"), a("billing_increment_hours"),
                             a("busy_usd_per_gpu_hour"))

    def take(self, idx: npt.NDArray[np.int64]) -> PaymentArrays:
        return PaymentArrays(self.usd_per_gpu_hour[idx], self.upfront_usd_per_gpu[idx],
                             self.commitment_hours[idx], self.billing_increment_hours[idx],
                             self.busy_usd_per_gpu_hour[idx])


@dataclass(frozen=True)
class CostParts:
    """Cost of one run split by what it pays for; the parts sum to total_usd.

    upfront_usd: upfront fees / capex borne by the run; held_usd: hourly rate x hours the run
    is charged for while it trains; idle_usd: hourly rate x hours paid but not training
    (billing round-up, or the idle part of a commitment); busy_usd: energy above idle.
    rate_coeff / upfront_coeff: d(total)/d(usd_per_gpu_hour) and d(total)/d(upfront per GPU),
    the slopes used to solve break-even prices (cost is linear in both).
    """

    upfront_usd: FloatArray
    held_usd: FloatArray
    idle_usd: FloatArray
    busy_usd: FloatArray
    total_usd: FloatArray
    rate_coeff: FloatArray
    upfront_coeff: FloatArray


def commitments_borne(wall_h: FloatArray, commitment_h: FloatArray, mode: Mode,
                      utilization: float) -> FloatArray:
    """How many commitments one run pays for: ceil(W/C) for a single run, W/(u C) for a year
    of work at utilization u. Zero for pay-as-you-go (C == 0)."""
    c = np.where(commitment_h > 0, commitment_h, 1.0)
    n = np.ceil(wall_h / c - _EPS) if mode == "single_run" else wall_h / (utilization * c)
    return np.where(commitment_h > 0, n, 0.0)


def run_cost(gpus: FloatArray, wall_h: FloatArray, pay: PaymentArrays, mode: Mode,
             utilization: float = 1.0) -> CostParts:
    """Cost of one run of wall-clock wall_h hours on gpus GPUs, vectorised over candidates.
    Formulas and sources: module docstring. Infinite wall time gives infinite cost."""
    if not 0 < utilization <= 1:
        raise ValueError("utilization must be in (0, 1]")
    g, w = np.asarray(gpus, dtype=np.float64), np.asarray(wall_h, dtype=np.float64)
    rate, up, c = pay.usd_per_gpu_hour, pay.upfront_usd_per_gpu, pay.commitment_hours
    committed = c > 0
    finite = np.isfinite(w)
    w0 = np.where(finite, w, 0.0)
    inc = pay.billing_increment_hours
    billable = np.ceil(w0 / inc - _EPS) * inc
    n = commitments_borne(w0, c, mode, utilization)
    paid_hours = np.where(committed, n * c, billable)
    upfront_coeff = g * np.where(committed, n, 1.0)
    rate_coeff = g * paid_hours
    held = g * rate * np.minimum(w0, paid_hours)
    idle = g * rate * np.maximum(paid_hours - w0, 0.0)
    upfront = upfront_coeff * up
    busy = g * pay.busy_usd_per_gpu_hour * w0
    total = upfront + held + idle + busy
    inf = np.where(finite, 0.0, np.inf)
    return CostParts(upfront + inf, held + inf, idle, busy, total + inf, rate_coeff,
                     upfront_coeff)


def run_cost_scalar(gpus: int, wall_h: float, terms: PaymentTerms, mode: Mode,
                    utilization: float = 1.0) -> float:
    """The same cost for one candidate, written plainly; tests check run_cost against it."""
    if terms.commitment_hours == 0:
        billable = math.ceil(wall_h / terms.billing_increment_hours - _EPS) \
            * terms.billing_increment_hours
        return gpus * (terms.upfront_usd_per_gpu + terms.usd_per_gpu_hour * billable)
    block = terms.upfront_usd_per_gpu + terms.usd_per_gpu_hour * terms.commitment_hours
    share: float
    if mode == "single_run":
        share = math.ceil(wall_h / terms.commitment_hours - _EPS)
    else:
        share = wall_h / (utilization * terms.commitment_hours)
    return gpus * (block * share + terms.busy_usd_per_gpu_hour * wall_h)
