"""Finance model against hand-worked numbers (the arithmetic is written in each test)."""

from dataclasses import replace

import numpy as np
import numpy_financial as npf
import pytest

from app.modelling.finance import profiles
from app.modelling.finance.compare import (
    Scenario,
    affine_coefficients,
    break_even_utilization,
    compare,
    sweep_pv_usd,
)
from app.modelling.finance.mixed import Mixed, mixed_flows, optimal_baseline
from app.modelling.finance.money import (
    discount_factors,
    monthly_rate,
    npv_usd,
    payback_month,
)
from app.modelling.finance.network import NetworkDesign, network_bill, two_tier_fabric
from app.modelling.finance.options import (
    Billing,
    Facility,
    Option,
    Owned,
    Ownership,
    Rental,
    capex_lines,
    owned_flows,
    rental_flows,
    spot_hours_multiplier,
    staff_fte,
)
from app.modelling.finance.sensitivity import monte_carlo, tornado

ON_DEMAND = Rental(Billing.used_hours, 55.04)
RESERVED_1Y = Rental(Billing.committed, 19.50, term_months=12)
# Seed 000's purchase: $18K H200s, $35K servers, one $40K switch, $25K/node kit, 10 kW nodes.
SEED_OWN = Ownership(gpu_usd_each=18_000, server_usd_per_node=35_000, busy_kw_per_node=10.0,
                     idle_power_fraction=0.3, ib_switch_usd_each=40_000,
                     node_kit_usd_per_node=25_000, staff_usd_per_fte_year=150_000,
                     electricity_usd_per_kwh=0.08, pue=1.0, resale_decline_per_year=1.0,
                     network=NetworkDesign(frontend_ports_per_node=0))


def test_reserved_24_months_is_every_hour_of_two_terms_at_any_utilization() -> None:
    # 8 nodes × $19.50/h × 17,520 h (2 × 8,760) = $2,733,120 — used 24/7 or 8 h × 5 d alike.
    for profile in (profiles.constant(1.0, 24), profiles.schedule(8, 5, 24)):
        assert rental_flows(RESERVED_1Y, 8, profile, 24).sum() == pytest.approx(2_733_120.0)


def test_seed_000_eight_by_five_on_reserved_and_on_demand() -> None:
    # 8 h × 5 d = 40 of 168 h a week; 17,520 h × 40/168 = 4,171.43 h used over 2 years.
    used_h = 17_520 * 40 / 168
    on_demand = rental_flows(ON_DEMAND, 8, profiles.schedule(8, 5, 24), 24).sum()
    assert on_demand == pytest.approx(8 * 55.04 * used_h)  # $1,836,751.54
    # Even billed only for hours used, $19.50/h would be 8 × 19.50 × 4,171.43 = $650,742.86,
    # not the article's ~$65K.
    assert 8 * 19.50 * used_h == pytest.approx(650_742.857, abs=0.01)


def test_reserved_horizon_mid_term_still_owes_the_whole_term() -> None:
    # 18 months of a 12-month term needs two terms: 24 months are owed, 6 in the last month.
    flows = rental_flows(RESERVED_1Y, 8, profiles.constant(0.5, 18), 18)
    assert flows.sum() == pytest.approx(2_733_120.0)
    assert flows[-1] == pytest.approx(8 * 19.50 * 730 * 7)  # month 18 itself + 6 owed


def test_reserved_upfront_paid_at_each_term_start() -> None:
    rental = Rental(Billing.committed, 10.0, term_months=12, upfront_usd_per_node=50_000)
    flows = rental_flows(rental, 1, profiles.constant(1.0, 24), 24)
    assert flows[0] == pytest.approx(50_000 + 10.0 * 730)
    assert flows[12] == pytest.approx(50_000 + 10.0 * 730)
    assert flows[1] == pytest.approx(7_300)


def test_capacity_blocks_pay_whole_days() -> None:
    # 8 h × 5 d needs 5 booked days a week: 730 h × 5/7 = 521.43 h a month per node.
    block = Rental(Billing.booked_days, 39.33)
    flows = rental_flows(block, 2, profiles.schedule(8, 5, 1), 1)
    assert flows[0] == pytest.approx(2 * 39.33 * 730 * 5 / 7)


def test_spot_rework_multiplier_by_hand() -> None:
    # One interruption per 5 h; each loses half of a 1 h checkpoint interval plus 20 min:
    # lost share 0.2 × (0.5 + 1/3) = 1/6, so 1 / (1 − 1/6) = 1.2 billed hours per useful hour.
    assert spot_hours_multiplier(0.2, 1.0, 1 / 3) == pytest.approx(1.2)
    assert spot_hours_multiplier(2.0, 1.0, 0.5) == float("inf")
    spot = Rental(Billing.used_hours, 20.0, hours_multiplier=1.2)
    assert rental_flows(spot, 4, profiles.constant(0.5, 1), 1)[0] == pytest.approx(
        4 * 20.0 * 730 * 0.5 * 1.2)


def test_cloud_extras_and_managed_overhead() -> None:
    # Seed 000: + $100K egress + $50K SageMaker over 24 months = $6,250 a month of extras.
    r = Rental(Billing.committed, 19.50, 12, extras_usd_per_month=6_250)
    assert rental_flows(r, 8, profiles.constant(1.0, 24), 24).sum() == pytest.approx(2_883_120.0)
    managed = Rental(Billing.used_hours, 10.0, managed_overhead_fraction=0.25)
    assert rental_flows(managed, 1, profiles.constant(1.0, 1), 1)[0] == pytest.approx(9_125.0)


def test_owned_seed_000_by_hand() -> None:
    flows = owned_flows(Owned(SEED_OWN), 8, 8, profiles.constant(1.0, 24), 24)
    # 64 ports fit one 64-port switch: capex = 64 × 18,000 + 8 × 35,000 + 40,000 + 8 × 25,000
    capex = 1_152_000 + 280_000 + 40_000 + 200_000  # $1,672,000
    power_2y = 8 * 10.0 * 17_520 * 0.08  # 80 kW × 17,520 h × $0.08 = $112,128 (seed: $420K)
    staff_2y = 2 * 150_000
    assert flows[0] == pytest.approx(capex + (power_2y + staff_2y) / 24)
    assert flows.sum() == pytest.approx(capex + power_2y + staff_2y)  # $2,084,128


def test_owned_idle_power_pue_support_resale() -> None:
    own = Ownership(gpu_usd_each=10_000, server_usd_per_node=20_000, busy_kw_per_node=10.0,
                    idle_power_fraction=0.3, electricity_usd_per_kwh=0.10, pue=1.5,
                    support_fraction_per_year=0.12, resale_decline_per_year=0.5,
                    network=NetworkDesign(nics_per_node=0, frontend_ports_per_node=0))
    flows = owned_flows(Owned(own), 1, 8, profiles.constant(0.0, 24), 24)
    hardware = 8 * 10_000 + 20_000  # $100,000
    idle_month = 3.0 * 1.5 * 730 * 0.10  # 3 kW idle × PUE 1.5 × 730 h × $0.10 = $328.50
    support_month = 0.12 * hardware / 12  # $1,000
    resale = hardware * 0.5**2  # two years at −50%/yr: $25,000 back in the last month
    assert flows[1] == pytest.approx(idle_month + support_month)
    assert flows[-1] == pytest.approx(idle_month + support_month - resale)


def test_staff_fte_derived_or_fixed() -> None:
    # 200 nodes at 64 per FTE → ⌈3.125⌉ = 4 FTE; a fixed headcount of 2.5 overrides the ratio.
    assert float(staff_fte(SEED_OWN, 200)) == 4.0
    assert float(staff_fte(SEED_OWN, 1)) == 1.0
    assert float(staff_fte(replace(SEED_OWN, staff_fte=2.5), 200)) == 2.5
    assert float(staff_fte(SEED_OWN, 0)) == 0.0


def test_colo_bills_contracted_kw_whether_used_or_not() -> None:
    fac = Facility(colocated=True, colo_usd_per_kw_month=184.06, contracted_headroom=0.1,
                   colo_metered_usd_per_kwh=0.0)
    idle = owned_flows(Owned(SEED_OWN, fac), 8, 8, profiles.constant(0.0, 3), 3)
    busy = owned_flows(Owned(SEED_OWN, fac), 8, 8, profiles.constant(1.0, 3), 3)
    # 80 kW of nodes × 1.1 headroom × $184.06 = $16,197.28 a month, plus $12,500 staff.
    assert idle[1] == pytest.approx(80 * 1.1 * 184.06 + 12_500)
    assert busy[1] == pytest.approx(idle[1])


def test_capex_lines_itemised_network() -> None:
    own = Ownership(1.0, 0.0, 1.0, ib_switch_usd_each=40_000, nic_usd_each=1_500,
                    cable_usd_each=300, transceiver_usd_each=900, eth_switch_usd_each=20_000,
                    rack_usd_each=15_000, installation_fraction=0.03)
    lines = capex_lines(own, 32, 8)
    # 32 nodes × 8 NICs = 256 ports: 8 leaves + 4 spines (see test_network_counts).
    # links: 256 node + 256 leaf-spine = 512, × 2 transceivers; 64 front-end DAC cables.
    network = 12 * 40_000 + 256 * 1_500 + (512 + 64) * 300 + 1_024 * 900 + 1 * 20_000
    assert lines["network"] == pytest.approx(network)
    assert lines["racks"] == pytest.approx(8 * 15_000)
    assert lines["installation"] == pytest.approx(0.03 * (256 + network + 120_000))


@pytest.mark.parametrize(("nodes", "ratio", "leaves", "spines", "fabric_links"), [
    (8, 1.0, 1, 0, 0),  # 64 ports fit one 64-port switch
    (32, 1.0, 8, 4, 256),  # 32 down / 32 up: 8 leaves, 256 uplinks / 64 = 4 spines
    (32, 3.0, 6, 2, 96),  # 48 down / 16 up: ⌈256/48⌉ = 6 leaves, 96 uplinks → 2 spines
    # 512 nodes = 4,096 ports: 128 leaves > 64, so three tiers: 4,096 uplinks → 128
    # aggregation (32 up each) → 4,096 more links into 64 cores.
    (512, 1.0, 128, 192, 8_192),
])
def test_network_counts(nodes: int, ratio: float, leaves: int, spines: int,
                        fabric_links: int) -> None:
    bill = network_bill(nodes, NetworkDesign(oversubscription=ratio))
    counts = (float(bill.leaf_switches), float(bill.spine_switches), float(bill.fabric_links))
    assert counts == (leaves, spines, fabric_links)


def test_two_tier_fabric_is_the_scalar_view() -> None:
    # 256 NIC ports on 64-port switches at 3:1: ⌈256/48⌉ = 6 leaves, 96 uplinks → 2 spines.
    bill = two_tier_fabric(256, 64, 3.0)
    assert (bill.leaf_switches, bill.spine_switches, bill.switches) == (6, 2, 8)
    assert two_tier_fabric(64, 64).switches == 1


def test_network_bill_vectorized_matches_scalar() -> None:
    nodes = np.array([1, 8, 9, 32, 300, 4096], dtype=np.float64)
    vec = network_bill(nodes)
    for i, n in enumerate(nodes):
        assert vec.ib_switches[i] == network_bill(int(n)).ib_switches


def test_npv_matches_numpy_financial() -> None:
    flows = np.array([1_672_000.0] + [18_000.0] * 23 + [-400_000.0])
    rate = 0.08
    expected = npf.npv(monthly_rate(rate), flows)
    assert float(npv_usd(flows, rate)) == pytest.approx(expected, rel=1e-12)
    # Twelve monthly steps compound to one year at the annual rate.
    assert discount_factors(13, rate)[12] == pytest.approx(1 / 1.08)


def test_payback_month() -> None:
    buy = np.array([100.0, 0, 0, 0, 0])
    rent = np.array([30.0, 30, 30, 30, 30])
    # Cumulative: buy 100 every month; rent 30, 60, 90, 120 → buy ahead from month 4.
    assert payback_month(buy, rent) == 4.0
    assert np.isnan(payback_month(rent * 10, rent))


def test_break_even_utilization_buy_vs_on_demand_by_hand() -> None:
    own = Ownership(gpu_usd_each=10_000, server_usd_per_node=20_000, busy_kw_per_node=10.0,
                    idle_power_fraction=0.0, electricity_usd_per_kwh=0.10, pue=1.0,
                    resale_decline_per_year=1.0,
                    network=NetworkDesign(nics_per_node=0, frontend_ports_per_node=0))
    od = Rental(Billing.used_hours, 30.0)
    a1, b1 = affine_coefficients(Owned(own), 1, 8, 12, 0.0)
    a2, b2 = affine_coefficients(od, 1, 8, 12, 0.0)
    # Buy: $100,000 + u × 10 kW × 8,760 h × $0.10 = 100,000 + 8,760u
    # On-demand: u × $30 × 8,760 h = 262,800u  →  u* = 100,000 / (262,800 − 8,760) = 0.39364
    assert float(a1) == pytest.approx(100_000)
    assert float(b1) == pytest.approx(8_760)
    u = float(break_even_utilization(a1, b1, a2, b2))
    assert u == pytest.approx(100_000 / 254_040)
    # Reserved never crosses owned at $10/h: 87,600 < 100,000 at every utilization → NaN.
    a3, b3 = affine_coefficients(Rental(Billing.committed, 10.0, 12), 1, 8, 12, 0.0)
    assert np.isnan(break_even_utilization(a1, b1, a3, b3))


def test_mixed_baseline_covers_the_steady_load_and_rents_the_burst() -> None:
    # 10 nodes; demand 4 nodes for 10 months, 10 nodes for 2 months.
    profile = profiles.series([0.4] * 10 + [1.0] * 2)
    mixed = Mixed(Rental(Billing.committed, 10.0, 12), Rental(Billing.used_hours, 30.0))
    best = optimal_baseline(mixed, 10, 8, profile, 12, 0.0)
    # A baseline node costs 12 × 730 × $10 = $87,600 a year; on demand it would be needed
    # 10 months (nodes 1–4: 10 × 730 × 30 = $219,000, worth reserving) or 2 months
    # (nodes 5–10: 2 × 730 × 30 = $43,800, cheaper on demand). So the baseline is 4 nodes.
    assert best.baseline_nodes == 4
    expected = 4 * 87_600 + 6 * 2 * 730 * 30.0
    assert best.monthly_usd.sum() == pytest.approx(expected)
    # And it equals a direct evaluation at b = 4.
    direct = mixed_flows(mixed, 10, 8, profile, 12, 4)
    assert direct.sum() == pytest.approx(expected)


def test_mixed_by_hand_with_schedule_peak_and_extras() -> None:
    # 4 nodes on 8 h × 5 d (busy 40/168): baseline 1 node on a used-hours GPU cloud at $16,
    # the other 3 on demand at $40; $1,000 of extras a month, paid once.
    profile = profiles.schedule(8, 5, 2)
    mixed = Mixed(Rental(Billing.used_hours, 16.0, extras_usd_per_month=500.0),
                  Rental(Billing.used_hours, 40.0, extras_usd_per_month=1_000.0))
    flows = mixed_flows(mixed, 4, 8, profile, 2, 1)
    hours = 730 * 40 / 168  # 173.81 busy hours a month
    assert flows[0] == pytest.approx(1 * 16 * hours + 3 * 40 * hours + 1_000)
    # Everything owned on a baseline with no peak: extras only while cloud capacity is used.
    owned = Mixed(Owned(SEED_OWN), Rental(Billing.used_hours, 40.0, extras_usd_per_month=1e3))
    all_owned = mixed_flows(owned, 8, 8, profile, 2, 8)
    alone = owned_flows(Owned(SEED_OWN), 8, 8, profile, 2)
    np.testing.assert_allclose(all_owned, alone)


def test_compare_reports_per_gpu_hour_and_goodput() -> None:
    sc = Scenario(8, 8, profiles.constant(0.5, 12), 0.0, goodput_fraction=0.8)
    (od,) = compare(sc, {"od": ON_DEMAND})
    # $55.04 per node-hour = $6.88 per GPU-hour used; per useful hour 6.88 / 0.8 = $8.60.
    assert od.usd_per_gpu_hour_used == pytest.approx(6.88)
    assert od.usd_per_useful_gpu_hour == pytest.approx(8.60)


def test_sweep_equals_direct_evaluation() -> None:
    options: list[Option] = [Owned(SEED_OWN), ON_DEMAND, RESERVED_1Y,
                             Rental(Billing.committed, 12.0, 36, 50_000),
                             Rental(Billing.used_hours, 20.0, hours_multiplier=1.2)]
    us = np.array([0.0, 0.3, 1.0])
    hs = np.array([6, 18, 36])
    pv = sweep_pv_usd(options, 8, 8, us, hs, 0.08)
    for o, opt in enumerate(options):
        for i, u in enumerate(us):
            for j, h in enumerate(hs):
                prof = profiles.constant(float(u), int(h))
                direct = npv_usd(compare(Scenario(8, 8, prof, 0.08), {"x": opt})[0].monthly_usd,
                                 0.08)
                assert pv[o, i, j] == pytest.approx(float(direct))


def test_tornado_swings_by_hand() -> None:
    own = Ownership(gpu_usd_each=10_000, server_usd_per_node=20_000, busy_kw_per_node=10.0,
                    idle_power_fraction=0.0, electricity_usd_per_kwh=0.0, pue=1.0,
                    resale_decline_per_year=1.0,
                    network=NetworkDesign(nics_per_node=0, frontend_ports_per_node=0))
    rent = Rental(Billing.committed, 10.0, 12)
    sc = Scenario(1, 8, profiles.constant(1.0, 12), 0.0)
    base, rows = tornado(Owned(own), rent, sc)
    by_name = {r.name: r for r in rows}
    # Buy $100,000 − rent 8,760 h × $10 = $87,600 → +$12,400.
    assert base == pytest.approx(12_400)
    # GPUs ±20%: 8 × $10,000 × 0.2 = ±$16,000 on the difference.
    gpu = by_name["buy.gpu_usd_each"]
    assert (gpu.difference_at_low_usd, gpu.difference_at_high_usd) == pytest.approx(
        (12_400 - 16_000, 12_400 + 16_000))
    # Rent ±20%: ±$17,520, and a higher rent makes buying relatively cheaper.
    rate = by_name["rent.usd_per_node_hour"]
    assert rate.difference_at_high_usd == pytest.approx(12_400 - 17_520)
    assert rows[0].name == "rent.usd_per_node_hour"  # widest swing first: 35,040 > 32,000
    # Electricity is free here, so utilization does not move the difference at all.
    assert by_name["utilization"].swing_usd == pytest.approx(0.0)
    # A sourced range replaces ±20%.
    _, ranged = tornado(Owned(own), rent, sc, {"buy.gpu_usd_each": (9_000.0, 30_000.0)})
    gpu = next(r for r in ranged if r.name == "buy.gpu_usd_each")
    assert gpu.difference_at_high_usd == pytest.approx(12_400 + 8 * 20_000)
    # ... but only when it brackets the value used; else ±20% again.
    _, outside = tornado(Owned(own), rent, sc, {"buy.gpu_usd_each": (20_000.0, 30_000.0)})
    gpu = next(r for r in outside if r.name == "buy.gpu_usd_each")
    assert (gpu.low_value, gpu.high_value) == pytest.approx((8_000, 12_000))


def test_monte_carlo_is_seeded_and_ordered() -> None:
    sc = Scenario(8, 8, profiles.constant(0.7, 24), 0.08)
    first = monte_carlo(Owned(SEED_OWN), RESERVED_1Y, sc, draws=500, seed=7)
    again = monte_carlo(Owned(SEED_OWN), RESERVED_1Y, sc, draws=500, seed=7)
    assert first == again
    p10, p50, p90 = first.difference_usd
    assert p10 < p50 < p90
    assert 0.0 <= first.probability_buy_cheaper <= 1.0
