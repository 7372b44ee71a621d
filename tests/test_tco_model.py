"""Foundation finance model against hand-worked numbers."""

import numpy as np
import pytest

from app.modelling.finance.network import two_tier_fabric
from app.modelling.finance.tco import (
    CloudRates,
    ClusterShape,
    OwnedCosts,
    compare,
    on_demand_monthly_usd,
    owned_monthly_usd,
    reserved_monthly_usd,
)

CLUSTER = ClusterShape(nodes=8, gpus_per_node=8)
RATES = CloudRates(on_demand_usd_per_hour=55.04, reserved_usd_per_hour=19.50)


def test_reserved_24_months_is_every_hour_of_two_terms() -> None:
    # 8 nodes × $19.50/h × 17,520 h (2 × 8,760) = $2,733,120
    flows = reserved_monthly_usd(CLUSTER, RATES, 24)
    assert flows.sum() == pytest.approx(8 * 19.50 * 17_520)
    assert flows.sum() == pytest.approx(2_733_120.0)


def test_reserved_costs_the_same_at_any_utilization_and_on_demand_scales() -> None:
    owned = OwnedCosts(18_000, 35_000, 45_000, 10.2, 3.06, 0.08, 1.3, 150_000)
    low = {o.key: o.total_usd for o in compare(CLUSTER, owned, RATES, 24, 0.10)}
    high = {o.key: o.total_usd for o in compare(CLUSTER, owned, RATES, 24, 1.00)}
    assert low["aws_reserved"] == high["aws_reserved"]
    # on-demand: 8 × $55.04 × 17,520 h × u  → $7,714,406.40 at u = 1, a tenth of it at 0.1
    assert high["aws_on_demand"] == pytest.approx(8 * 55.04 * 17_520)
    assert low["aws_on_demand"] == pytest.approx(0.1 * high["aws_on_demand"])


def test_reserved_horizon_mid_term_still_owes_the_whole_term() -> None:
    # 18 months of a 12-month term needs two terms: 24 months are owed.
    assert reserved_monthly_usd(CLUSTER, RATES, 18).sum() == pytest.approx(2_733_120.0)


def test_reserved_upfront_paid_at_each_term_start() -> None:
    rates = CloudRates(55.04, 10.0, reserved_upfront_usd=50_000, reserved_term_months=12)
    flows = reserved_monthly_usd(ClusterShape(1), rates, 24)
    assert flows[0] == pytest.approx(50_000 + 10.0 * 730)
    assert flows[12] == pytest.approx(50_000 + 10.0 * 730)
    assert flows[1] == pytest.approx(7_300)


def test_owned_capex_power_and_staff_by_hand() -> None:
    owned = OwnedCosts(gpu_usd_each=18_000, server_usd_per_node=35_000, network_usd_per_node=45_000,
                       power_busy_kw_per_node=10.0, power_idle_kw_per_node=3.0,
                       electricity_usd_per_kwh=0.08, pue=1.0, staff_usd_per_year=150_000)
    flows = owned_monthly_usd(CLUSTER, owned, 24, 1.0)
    capex = 8 * (8 * 18_000 + 35_000 + 45_000)  # $1,792,000
    power_2y = 8 * 10.0 * 17_520 * 0.08  # 80 kW × 17,520 h × $0.08 = $112,128 (seed says $420K)
    staff_2y = 300_000
    assert flows.sum() == pytest.approx(capex + power_2y + staff_2y)
    # At zero utilization the nodes still draw idle power: 8 × 3 kW × 730 h × $0.08 a month.
    idle = owned_monthly_usd(CLUSTER, owned, 2, 0.0)
    assert idle[1] == pytest.approx(8 * 3.0 * 730 * 0.08 + 12_500)


def test_on_demand_is_linear_in_utilization() -> None:
    us = np.linspace(0, 1, 11)
    totals = np.array([on_demand_monthly_usd(CLUSTER, RATES, 12, float(u)).sum() for u in us])
    assert np.allclose(np.diff(totals), totals[-1] / 10)


@pytest.mark.parametrize(("ports", "radix", "ratio", "leaves", "spines"), [
    (64, 64, 1.0, 1, 0),  # 8 nodes × 8 NICs fit one 64-port switch
    (256, 64, 1.0, 8, 4),  # 32 down / 32 up per leaf: 8 leaves, 256 uplinks / 64 = 4 spines
    (256, 64, 3.0, 6, 2),  # 48 down / 16 up: ceil(256/48) = 6 leaves, 96 uplinks → 2 spines
])
def test_two_tier_fabric_counts(ports: int, radix: int, ratio: float, leaves: int,
                                spines: int) -> None:
    bill = two_tier_fabric(ports, radix, ratio)
    assert (bill.leaf_switches, bill.spine_switches) == (leaves, spines)
