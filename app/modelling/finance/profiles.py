"""Utilization profiles: how much of the cluster works, month by month.

A profile gives, for each month m, three fractions (arrays of shape (…, M)):
- `busy_fraction[m]`: share of the month's hours in which the workload runs;
- `node_fraction[m]`: share of the cluster's nodes busy during those hours;
- `day_fraction[m]`: share of the month's days with any work (what day-granular bookings such
  as EC2 Capacity Blocks must pay for).
Utilization (share of the cluster's GPU-hours used) is busy_fraction × node_fraction.

The split matters for mixed strategies: "8 h × 5 days of the whole cluster" (busy 40/168,
nodes 1) cannot be served by a smaller owned baseline, while "a third of the nodes all month"
(busy 1, nodes 1/3) can. All option costs except mixed ones are affine in node_fraction.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from app.modelling.finance.money import FloatArray

HOURS_PER_WEEK = 168.0


@dataclass(frozen=True)
class UtilizationProfile:
    busy_fraction: FloatArray
    node_fraction: FloatArray
    day_fraction: FloatArray

    @cached_property
    def utilization(self) -> FloatArray:
        return np.asarray(self.busy_fraction * self.node_fraction)

    @property
    def months(self) -> int:
        return int(self.busy_fraction.shape[-1])

    def scaled_nodes(self, node_fraction: FloatArray) -> "UtilizationProfile":
        """The same hours and days with another node fraction (mixed strategies, break-even)."""
        return UtilizationProfile(self.busy_fraction, np.asarray(node_fraction, dtype=np.float64),
                                  self.day_fraction)


def _full(months: int, value: float) -> FloatArray:
    return np.full(months, value, dtype=np.float64)


def constant(utilization: float, months: int) -> UtilizationProfile:
    """A steady share of the nodes busy around the clock (the usual "u% utilized")."""
    return UtilizationProfile(_full(months, 1.0), _full(months, utilization), _full(months, 1.0))


def schedule(hours_per_day: float, days_per_week: float, months: int,
             node_fraction: float = 1.0) -> UtilizationProfile:
    """The whole cluster (or `node_fraction` of it) for hours/day × days/week.

    Seed 000's "8 hours/day, 5 days/week": busy = 8 × 5 / 168 = 0.238.
    """
    busy = hours_per_day * days_per_week / HOURS_PER_WEEK
    day = days_per_week / 7.0 if hours_per_day > 0 else 0.0
    return UtilizationProfile(_full(months, busy), _full(months, node_fraction), _full(months, day))


def series(monthly_utilization: FloatArray | list[float]) -> UtilizationProfile:
    """Month-by-month shares of the nodes busy around the clock (ramp-ups, burst quarters)."""
    u = np.asarray(monthly_utilization, dtype=np.float64)
    ones = np.ones_like(u)
    return UtilizationProfile(ones, u, np.where(u > 0, 1.0, 0.0))
