"""Sensitivity of the buy-vs-rent difference: a tornado table and a Monte Carlo.

The difference is PV(buy) − PV(rent) at the scenario's discount rate (negative: buying is
cheaper). Each input moves to its sourced low–high range when one is known, else ±`swing`
(default 20%) around its value; the tornado moves one input at a time, the Monte Carlo all at
once (triangular draws: low, mode = the value used, high). All variants are evaluated in one
batched pass per option: every float field becomes a (P, 1) array (options.py).
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

import numpy as np

from app.modelling.finance.compare import Scenario
from app.modelling.finance.money import FloatArray, npv_usd
from app.modelling.finance.options import Option, Owned, option_flows

Ranges = Mapping[str, tuple[float, float]]
# Ratios with physical floors: perturbing must not push them below these.
FLOORS = {"pue": 1.0, "hours_multiplier": 1.0}
CEILINGS = {"idle_power_fraction": 1.0, "resale_decline_per_year": 1.0}


def numeric_inputs(option: Option) -> dict[str, float]:
    """The perturbable inputs of an option: its non-zero fields declared float, by name."""
    parts: list[Any] = [option.ownership, option.facility] if isinstance(option, Owned) \
        else [option]
    out: dict[str, float] = {}
    for part in parts:
        for f in fields(part):
            value = getattr(part, f.name)
            if f.type in (float, "float") and value != 0.0 \
                    and not (f.name == "hours_multiplier" and value == 1.0):
                out[f.name] = float(value)
    return out


def batched(option: Option, values: Mapping[str, FloatArray]) -> Option:
    """A copy of `option` whose named fields hold arrays of P values, shaped (P, 1)."""
    def fill(part: Any) -> Any:
        assert is_dataclass(part)
        names = {f.name for f in fields(part)}
        mine = {k: np.asarray(v, dtype=np.float64)[:, None] for k, v in values.items()
                if k in names}
        return replace(part, **mine)  # type: ignore[type-var]

    if isinstance(option, Owned):
        return Owned(fill(option.ownership), fill(option.facility))
    result: Option = fill(option)
    return result


def _bounds(name: str, value: float, ranges: Ranges, swing: float) -> tuple[float, float]:
    """The sourced range when it brackets the value used, else ±swing around it."""
    low, high = ranges.get(name, (value, value))
    if not low <= value <= high or low == high:
        low, high = value * (1.0 - swing), value * (1.0 + swing)
    low, high = max(low, FLOORS.get(name, -np.inf)), min(high, CEILINGS.get(name, np.inf))
    return float(low), float(high)


@dataclass(frozen=True)
class TornadoRow:
    name: str  # "buy.gpu_usd_each", "rent.usd_per_node_hour", "utilization"
    base_value: float
    low_value: float
    high_value: float
    difference_at_low_usd: float
    difference_at_high_usd: float

    @property
    def swing_usd(self) -> float:
        return abs(self.difference_at_high_usd - self.difference_at_low_usd)


def _pv(option: Option, scenario: Scenario, profile_scale: FloatArray | float = 1.0) -> FloatArray:
    profile = scenario.profile
    if not np.isscalar(profile_scale) or profile_scale != 1.0:
        profile = profile.scaled_nodes(np.minimum(profile.node_fraction * profile_scale, 1.0))
    flows = option_flows(option, scenario.nodes, scenario.gpus_per_node, profile, scenario.months)
    return npv_usd(flows, scenario.annual_discount_rate)


def tornado(buy: Option, rent: Option, scenario: Scenario, ranges: Ranges | None = None,
            swing: float = 0.2) -> tuple[float, list[TornadoRow]]:
    """(base difference, rows sorted by swing, widest first). `ranges` keys are
    "buy.<field>", "rent.<field>" or "utilization"."""
    ranges = ranges or {}
    base = float(_pv(buy, scenario) - _pv(rent, scenario))
    rows: list[TornadoRow] = []
    for side, option, other in (("buy", buy, rent), ("rent", rent, buy)):
        inputs = numeric_inputs(option)
        names = list(inputs)
        if not names:
            continue
        p = 2 * len(names)
        values = {n: np.full(p, v) for n, v in inputs.items()}
        bounds = []
        for i, n in enumerate(names):
            lo, hi = _bounds(n, inputs[n], {k.split(".", 1)[1]: v for k, v in ranges.items()
                                            if k.startswith(side + ".")}, swing)
            values[n][2 * i], values[n][2 * i + 1] = lo, hi
            bounds.append((lo, hi))
        pv = _pv(batched(option, values), scenario)
        other_pv = float(_pv(other, scenario))
        diff = pv - other_pv if side == "buy" else other_pv - pv
        rows += [TornadoRow(f"{side}.{n}", inputs[n], lo, hi, float(diff[2 * i]),
                            float(diff[2 * i + 1]))
                 for i, (n, (lo, hi)) in enumerate(zip(names, bounds, strict=True))]
    u = float(scenario.profile.utilization.mean())
    lo_u, hi_u = ranges.get("utilization", (u * (1 - swing), min(u * (1 + swing), 1.0)))
    scale = np.array([[lo_u / u], [hi_u / u]]) if u > 0 else np.ones((2, 1))
    diff_u = _pv(buy, scenario, scale) - _pv(rent, scenario, scale)
    rows.append(TornadoRow("utilization", u, lo_u, hi_u, float(diff_u[0]), float(diff_u[1])))
    # Inputs that do not move the difference (e.g. a colocation price for an owned facility)
    # are dropped; utilization always stays.
    rows = [r for r in rows if r.swing_usd > 0.005 or r.name == "utilization"]
    rows.sort(key=lambda r: r.swing_usd, reverse=True)
    return base, rows


@dataclass(frozen=True)
class MonteCarlo:
    draws: int
    buy_pv_usd: tuple[float, float, float]  # P10, P50, P90
    rent_pv_usd: tuple[float, float, float]
    difference_usd: tuple[float, float, float]
    probability_buy_cheaper: float


def _percentiles(x: FloatArray) -> tuple[float, float, float]:
    p10, p50, p90 = np.percentile(x, [10, 50, 90])
    return float(p10), float(p50), float(p90)


def monte_carlo(buy: Option, rent: Option, scenario: Scenario, ranges: Ranges | None = None,
                swing: float = 0.2, draws: int = 2000, seed: int = 0) -> MonteCarlo:
    """All inputs drawn at once from triangular(low, value, high); seeded, so reproducible."""
    rng = np.random.default_rng(seed)
    ranges = ranges or {}
    pvs = []
    for side, option in (("buy", buy), ("rent", rent)):
        values = {}
        for name, value in numeric_inputs(option).items():
            lo, hi = _bounds(name, value, {k.split(".", 1)[1]: v for k, v in ranges.items()
                                           if k.startswith(side + ".")}, swing)
            lo, hi = min(lo, value), max(hi, value)
            values[name] = rng.triangular(lo, value, hi, draws) if hi > lo \
                else np.full(draws, value)
        pvs.append(_pv(batched(option, values), scenario) if values
                   else np.full(draws, float(_pv(option, scenario))))
    diff = pvs[0] - pvs[1]
    return MonteCarlo(draws, _percentiles(pvs[0]), _percentiles(pvs[1]), _percentiles(diff),
                      float(np.mean(diff < 0)))
