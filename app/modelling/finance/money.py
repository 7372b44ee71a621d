"""Money over time: the month grid, discounting, NPV, cumulative totals and payback.

Conventions (used by every finance module):
- a month is 730 hours (8,760 h / 12), so 24 months are exactly 17,520 h;
- month index m = 0 … M−1; a flow in month m is paid at the START of that month, so capex in
  month 0 is not discounted (the convention of numpy-financial's `npv`, whose first value is
  at t = 0);
- the annual discount rate r (cost of capital) converts to the equivalent monthly rate
  (1 + r)^(1/12) − 1, so twelve monthly steps compound to exactly one year at r;
- cash out is positive (these are costs); a resale inflow is a negative cost.
"""

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def monthly_rate(annual_rate: float) -> float:
    """(1 + r)^(1/12) − 1: the monthly rate equivalent to an effective annual rate r."""
    return float((1.0 + annual_rate) ** (1.0 / 12.0) - 1.0)


@lru_cache(maxsize=256)
def discount_factors(months: int, annual_rate: float) -> FloatArray:
    """(1 + r_m)^−m for m = 0 … months−1 (flows at the start of each month). Cached and
    read-only."""
    factors = np.power(1.0 + monthly_rate(annual_rate), -np.arange(months, dtype=np.float64))
    factors.setflags(write=False)
    return factors


def npv_usd(monthly_usd: FloatArray, annual_rate: float) -> FloatArray:
    """Present value of flows along the last axis: Σ flow[m] · (1 + r_m)^−m."""
    flows = np.asarray(monthly_usd, dtype=np.float64)
    return np.asarray(flows @ discount_factors(flows.shape[-1], annual_rate))


def cumulative_usd(monthly_usd: FloatArray) -> FloatArray:
    return np.cumsum(monthly_usd, axis=-1)


@lru_cache(maxsize=256)
def _month_masks(horizon: int, max_months: int) -> tuple[FloatArray, FloatArray]:
    m = np.arange(max_months)
    active, last = (m < horizon).astype(np.float64), (m == horizon - 1).astype(np.float64)
    active.setflags(write=False)  # shared between callers: never modified in place
    last.setflags(write=False)
    return active, last


def _masks(horizon_months: int | IntArray, max_months: int) -> tuple[FloatArray, FloatArray]:
    if isinstance(horizon_months, int | np.integer):
        return _month_masks(int(horizon_months), max_months)
    h = np.asarray(horizon_months)[..., None]
    m = np.arange(max_months)
    return (m < h).astype(np.float64), (m == h - 1).astype(np.float64)


def active_months(horizon_months: int | IntArray, max_months: int) -> FloatArray:
    """1.0 where month m < the horizon, else 0.0; broadcasts a horizon array (…,) → (…, M)."""
    return _masks(horizon_months, max_months)[0]


def last_month(horizon_months: int | IntArray, max_months: int) -> FloatArray:
    """1.0 in the final month of the horizon (where end-of-horizon items are booked)."""
    return _masks(horizon_months, max_months)[1]


def payback_month(cheaper_later_usd: FloatArray, other_usd: FloatArray) -> FloatArray:
    """First month (1-based) from which the cumulative cost of the first option stays at or
    below the other's through the end of the horizon; NaN if it never does.

    Typical use: buying (capex up front) against renting: the month the purchase has paid off.
    Works along the last axis of broadcastable arrays.
    """
    ahead = cumulative_usd(cheaper_later_usd) <= cumulative_usd(other_usd) + 1e-6
    # Stays ahead from m onwards  ⇔  no "behind" month at or after m.
    stays = np.flip(np.cumprod(np.flip(ahead, axis=-1), axis=-1), axis=-1).astype(bool)
    found = stays.any(axis=-1)
    first = np.argmax(stays, axis=-1).astype(np.float64) + 1.0
    return np.asarray(np.where(found, first, np.nan), dtype=np.float64)
