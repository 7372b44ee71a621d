"""Property tests (hypothesis) of the finance model."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.modelling.finance import profiles
from app.modelling.finance.compare import affine_coefficients, break_even_utilization
from app.modelling.finance.money import cumulative_usd, npv_usd
from app.modelling.finance.network import NetworkDesign
from app.modelling.finance.options import (
    Billing,
    Facility,
    Option,
    Owned,
    Ownership,
    Rental,
    option_flows,
    rental_flows,
)

money = st.floats(min_value=0.5, max_value=200.0)
nodes = st.integers(min_value=1, max_value=256)
months = st.integers(min_value=1, max_value=72)
fraction = st.floats(min_value=0.0, max_value=1.0)


def _owned(gpu_usd: float, kw: float, colocated: bool) -> Owned:
    own = Ownership(gpu_usd_each=gpu_usd, server_usd_per_node=35_000, busy_kw_per_node=kw,
                    idle_power_fraction=0.3, ib_switch_usd_each=40_000, ib_switch_kw_each=1.7,
                    node_kit_usd_per_node=25_000, staff_usd_per_fte_year=150_000,
                    support_fraction_per_year=0.08, installation_fraction=0.03,
                    spares_fraction=0.02, resale_decline_per_year=0.3,
                    network=NetworkDesign(oversubscription=2.0))
    return Owned(own, Facility(colocated, colo_usd_per_kw_month=184.06,
                               contracted_headroom=0.1, colo_metered_usd_per_kwh=0.08))


@given(rate=money, n=nodes, m=months, hours=st.lists(fraction, min_size=2, max_size=2))
def test_on_demand_cost_is_linear_in_hours_used(rate: float, n: int, m: int,
                                                hours: list[float]) -> None:
    od = Rental(Billing.used_hours, rate)
    u1, u2 = hours
    c1 = rental_flows(od, n, profiles.constant(u1, m), m).sum()
    c2 = rental_flows(od, n, profiles.constant(u2, m), m).sum()
    c_sum = rental_flows(od, n, profiles.constant((u1 + u2) / 2, m), m).sum()
    # Linear through the origin: cost(u) = rate × nodes × 730 h × months × u.
    assert c1 == pytest.approx(rate * n * 730 * m * u1, abs=1e-6)
    assert c_sum == pytest.approx((c1 + c2) / 2, abs=1e-6)


@given(rate=money, n=nodes, m=months, term=st.sampled_from([1, 12, 36]), u=fraction,
       upfront=st.floats(min_value=0, max_value=1e6))
def test_reserved_costs_the_same_at_any_utilization(rate: float, n: int, m: int, term: int,
                                                    u: float, upfront: float) -> None:
    ri = Rental(Billing.committed, rate, term, upfront)
    busy = rental_flows(ri, n, profiles.constant(u, m), m)
    idle = rental_flows(ri, n, profiles.constant(0.0, m), m)
    np.testing.assert_array_equal(busy, idle)
    terms = -(-m // term)  # every hour of every started term
    assert busy.sum() == pytest.approx(terms * (term * n * rate * 730 + n * upfront))


@settings(max_examples=60)
@given(gpu=st.floats(min_value=5_000, max_value=60_000), kw=st.floats(min_value=2, max_value=20),
       rate=st.floats(min_value=5, max_value=150), n=nodes, m=months,
       r=st.floats(min_value=0, max_value=0.3), colocated=st.booleans())
def test_at_break_even_utilization_both_options_cost_the_same(
        gpu: float, kw: float, rate: float, n: int, m: int, r: float, colocated: bool) -> None:
    own, od = _owned(gpu, kw, colocated), Rental(Billing.used_hours, rate)
    a1, b1 = affine_coefficients(own, n, 8, m, r)
    a2, b2 = affine_coefficients(od, n, 8, m, r)
    u = float(break_even_utilization(a1, b1, a2, b2))
    if np.isnan(u):  # no crossing in [0, 1]: one option is cheaper at both ends
        lo, hi = float(a1 - a2), float(a1 + b1 - a2 - b2)
        assert lo * hi > 0 or b1 == b2
        return
    pv = [float(npv_usd(option_flows(o, n, 8, profiles.constant(u, m), m), r))
          for o in (own, od)]
    assert pv[0] == pytest.approx(pv[1], abs=0.01)  # within a cent


@given(gpu=st.floats(min_value=5_000, max_value=60_000), n=nodes, m=months,
       series=st.lists(fraction, min_size=72, max_size=72), colocated=st.booleans())
def test_flows_are_affine_in_the_node_fraction_and_cumulative_sums(
        gpu: float, n: int, m: int, series: list[float], colocated: bool) -> None:
    prof = profiles.series(series[:m])
    options: list[Option] = [_owned(gpu, 10.2, colocated), Rental(Billing.used_hours, 55.0),
                             Rental(Billing.booked_days, 39.0),
                             Rental(Billing.committed, 19.5, 12, 1_000.0)]
    for option in options:
        flows = option_flows(option, n, 8, prof, m)
        zero = option_flows(option, n, 8, prof.scaled_nodes(np.zeros(m)), m)
        one = option_flows(option, n, 8, prof.scaled_nodes(np.ones(m)), m)
        np.testing.assert_allclose(flows, zero + prof.node_fraction * (one - zero), atol=1e-6)
        cum = cumulative_usd(flows)
        assert cum[-1] == pytest.approx(flows.sum())
        np.testing.assert_allclose(np.diff(cum), flows[1:], atol=1e-6)
