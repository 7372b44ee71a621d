"""The pure planner: cost formulas worked by hand, vectorised == scalar, the frontier, the
break-even solves and the infeasibility advice."""

from dataclasses import replace

import numpy as np
import pytest

from app.hardware.catalog import fabric, gpu
from app.modelling.planner import (
    ClusterArrays,
    ClusterSpec,
    PaymentArrays,
    PaymentTerms,
    Workload,
    break_even_price,
    break_even_utilization,
    evaluate_clusters,
    explain_infeasible,
    fabric_value,
    pareto_front,
    plan,
    run_cost,
    run_cost_scalar,
)
from app.modelling.planner.clusters import useful_fraction_with_interruptions
from app.modelling.planner.payment import Mode
from app.modelling.throughput import FailureConfig, TrainingConfig, estimate, goodput, preset

ON_DEMAND = PaymentTerms("od", "on-demand", "H100", 6.88, billing_increment_hours=1.0)
BLOCK = PaymentTerms("cb", "capacity block", "H100", 4.91625, billing_increment_hours=24.0)
RESERVED = PaymentTerms("ri", "reserved 1y", "H100", 2.4375, commitment_hours=8760.0)
OWNED = PaymentTerms("buy", "buy", "H100", 0.10, upfront_usd_per_gpu=30_000.0,
                     commitment_hours=26_280.0, busy_usd_per_gpu_hour=0.05, owned=True)


def _one(terms: PaymentTerms, gpus: float, hours: float, mode: Mode = "single_run",
         u: float = 1.0) -> float:
    cost = run_cost(np.array([gpus]), np.array([hours]), PaymentArrays.of([terms]), mode, u)
    return float(cost.total_usd[0])


def test_pay_as_you_go_rounds_up_to_the_billing_increment() -> None:
    # 256 GPUs x $6.88 x ceil(36.2 h) = 256 x 6.88 x 37 = $65,167.36
    assert _one(ON_DEMAND, 256, 36.2) == pytest.approx(65_167.36)
    # exactly 36 h is not billed a 37th hour
    assert _one(ON_DEMAND, 256, 36.0) == pytest.approx(256 * 6.88 * 36)
    # capacity block: 30 h rounds up to two 24-h blocks = 48 h: 256 x 4.91625 x 48 = $60,410.88
    assert _one(BLOCK, 256, 30.0) == pytest.approx(60_410.88)


def test_a_single_run_pays_the_whole_commitment() -> None:
    # 256 x 2.4375 x 8,760 = $5,466,240 whether the run takes 41 h or 8,000 h
    assert _one(RESERVED, 256, 41.0) == pytest.approx(5_466_240.0)
    assert _one(RESERVED, 256, 8000.0) == pytest.approx(5_466_240.0)
    # 9,000 h needs two terms: $10,932,480
    assert _one(RESERVED, 256, 9000.0) == pytest.approx(10_932_480.0)
    # owned, one run of 41 h: 256 x (30,000 + 0.10 x 26,280) + 256 x 0.05 x 41
    #   = 256 x 32,628 + 524.8 = 8,352,768 + 524.8 = $8,353,292.80
    assert _one(OWNED, 256, 41.0) == pytest.approx(8_353_292.80)


def test_a_year_of_work_bears_its_share_of_the_commitment() -> None:
    # owned at u = 0.5, 41 h: 256 x 32,628 x 41 / (0.5 x 26,280) + 256 x 0.05 x 41
    #   = 8,352,768 x 0.00312024... = 26,062.68 + 524.80 = $26,587.48
    assert _one(OWNED, 256, 41.0, "year_of_work", 0.5) == pytest.approx(26_587.48, abs=0.01)
    # reserved at u = 1: 256 x 2.4375 x 41 = $25,584 -- exactly the hours used
    assert _one(RESERVED, 256, 41.0, "year_of_work", 1.0) == pytest.approx(25_584.0)
    # pay-as-you-go does not care about utilization
    assert _one(ON_DEMAND, 8, 10.0, "year_of_work", 0.3) == pytest.approx(8 * 6.88 * 10)


def test_cost_parts_add_up_and_split_idle_from_busy() -> None:
    terms = [ON_DEMAND, BLOCK, RESERVED, OWNED]
    g = np.array([8.0, 16.0, 64.0, 256.0])
    w = np.array([10.5, 30.0, 100.0, 41.0])
    parts = run_cost(g, w, PaymentArrays.of(terms), "year_of_work", 0.6)
    total = parts.upfront_usd + parts.held_usd + parts.idle_usd + parts.busy_usd
    assert parts.total_usd == pytest.approx(total)
    # on-demand 10.5 h: 0.5 h of round-up paid idle = 8 x 6.88 x 0.5 = $27.52
    assert parts.idle_usd[0] == pytest.approx(27.52)
    # reserved at 60%: W/u - W = 100/0.6 - 100 = 66.67 idle hours x 64 x 2.4375 = $10,400
    assert parts.idle_usd[2] == pytest.approx(10_400.0)


def test_vectorised_cost_equals_the_scalar_formula() -> None:
    rng = np.random.default_rng(7)
    base = [ON_DEMAND, BLOCK, RESERVED, OWNED]
    terms = [base[i % 4] for i in range(400)]
    g = rng.choice([8, 64, 256, 1024], 400).astype(float)
    w = np.round(rng.uniform(0.1, 20_000.0, 400), rng.integers(0, 3))
    w[:8] = [24.0, 48.0, 8760.0, 26_280.0, 1.0, 23.9999, 24.0001, 0.5]
    cases: tuple[tuple[Mode, float], ...] = (("single_run", 1.0), ("year_of_work", 0.37))
    for mode, u in cases:
        vec = run_cost(g, w, PaymentArrays.of(terms), mode, u).total_usd
        scalar = [run_cost_scalar(int(gi), float(wi), t, mode, u)
                  for gi, wi, t in zip(g, w, terms, strict=True)]
        assert vec == pytest.approx(np.array(scalar), rel=1e-12)


def test_infinite_time_costs_infinity() -> None:
    parts = run_cost(np.array([8.0]), np.array([np.inf]), PaymentArrays.of([ON_DEMAND]),
                     "single_run")
    assert np.isinf(parts.total_usd[0])


def test_pareto_front_by_hand() -> None:
    hours = np.array([10.0, 20.0, 15.0, 30.0, 10.0, np.inf, 25.0])
    cost = np.array([100.0, 50.0, 80.0, 40.0, 90.0, 1.0, 60.0])
    # (10, 90) beats (10, 100); (15, 80), (20, 50), (30, 40) each cheaper than all faster
    # ones; (25, 60) is beaten by (20, 50); the infinite one cannot run.
    assert pareto_front(hours, cost).tolist() == [4, 2, 1, 3]


def test_pareto_front_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    hours = rng.integers(1, 40, 300).astype(float)
    cost = rng.integers(1, 40, 300).astype(float)
    front = set(pareto_front(hours, cost).tolist())
    for i in range(300):
        dominated = np.any((hours <= hours[i]) & (cost <= cost[i])
                           & ((hours < hours[i]) | (cost < cost[i])))
        duplicate_before = np.any((hours == hours[i]) & (cost == cost[i])
                                  & (np.arange(300) != i))
        if dominated:
            assert i not in front
        elif not duplicate_before:
            assert i in front


# --- the joint plan on real throughput ------------------------------------------------------

MODEL = preset("seed-70b")
TRAINING = TrainingConfig(global_batch_seqs=1024, total_tokens=20e9)


def _spec(nodes: int, fab: str, over: float = 1.0, key: str | None = None,
          cloud: bool = False) -> ClusterSpec:
    f = fabric(fab)
    g = gpu("H100 SXM 80GB")
    return ClusterSpec("H100", g, nodes, 8, fabric(g.scale_up), f, 32 if cloud else 8,
                       f.port_gbits_per_s, over, key or fab, cloud,
                       float("nan") if cloud else 40_000.0 * nodes, 15.0)


@pytest.fixture(scope="module")
def clusters() -> ClusterArrays:
    specs = [_spec(n, f) for n in (8, 16, 32) for f in ("InfiniBand NDR", "RoCEv2 untuned")]
    specs += [_spec(n, "AWS EFA v2", key="aws", cloud=True) for n in (8, 16, 32)]
    return evaluate_clusters(MODEL, TRAINING, specs)


PAYMENTS = (
    replace(ON_DEMAND, fabric_key="aws"), replace(RESERVED, fabric_key="aws"),
    replace(ON_DEMAND, key="spot", label="spot", usd_per_gpu_hour=2.5,
            interruption_per_node_hour=0.2 / 730, fabric_key="aws"),
    OWNED,
)


def test_cluster_throughput_is_the_throughput_models_best_layout(clusters: ClusterArrays) -> None:
    i = 2  # 16 nodes on NDR
    spec = clusters.specs[i]
    est = estimate(MODEL, TRAINING, spec.config())
    assert clusters.tokens_per_s[i] == pytest.approx(est.tokens_per_s)
    assert clusters.hardware_useful_fraction[i] == pytest.approx(est.goodput.useful_fraction)
    steps = sum(clusters.steps[k][i] for k in clusters.steps)
    assert steps == pytest.approx(clusters.step_time_s[i])


def test_plan_times_costs_and_pairs(clusters: ClusterArrays) -> None:
    wl = Workload(20e9, 200.0, budget_usd=2_000_000.0, mode="year_of_work", utilization=0.8)
    p = plan(MODEL, wl, clusters, PAYMENTS)
    # 3 AWS clusters x 3 AWS payments + 6 owned-fabric clusters x 1 owned payment
    assert len(p) == 15
    for k in range(len(p)):
        spec = p.clusters.specs[int(p.cluster_idx[k])]
        terms = p.payments[int(p.payment_idx[k])]
        assert (terms.fabric_key == "aws") == spec.cloud_only
        tps = p.clusters.tokens_per_s[int(p.cluster_idx[k])] * p.useful_fraction[k]
        assert p.wall_hours[k] == pytest.approx(20e9 / tps / 3600)
    # owned cost carries the network capex and the staff in its terms
    k = int(np.flatnonzero(p.payment_idx == 3)[0])
    spec = p.clusters.specs[int(p.cluster_idx[k])]
    assert p.terms.upfront_usd_per_gpu[k] == pytest.approx(30_000 + 40_000 * spec.nodes
                                                           / spec.num_gpus)
    assert p.terms.usd_per_gpu_hour[k] == pytest.approx(0.10 + 15.0 / spec.num_gpus)
    # ranked = feasible, cheapest first
    assert p.feasible[p.ranked].all()
    assert np.all(np.diff(p.cost.total_usd[p.ranked]) >= 0)
    assert set(p.frontier.tolist()) & set(p.ranked.tolist())


def test_spot_interruptions_stretch_the_run(clusters: ClusterArrays) -> None:
    spec = clusters.specs[-1]  # 32 nodes, 256 GPUs
    gpus, per_node = np.full(3, 256.0), np.full(3, 8.0)
    hw, advisor, seed_claim = useful_fraction_with_interruptions(
        MODEL, gpus, per_node, np.array([0.0, 0.2 / 730, 1 / 5]))
    assert spec.num_gpus == 256
    assert hw > advisor > seed_claim
    # one array call gives exactly what the scalar goodput gives per job: 0.2/730 reclaims
    # per node-hour on 8-GPU nodes adds 0.2/730/8 failures per GPU-hour
    fail_spot = FailureConfig(failures_per_gpu_hour=FailureConfig().failures_per_gpu_hour
                              + 0.2 / 730 / 8)
    assert advisor == goodput(MODEL.total_params, 256, fail_spot).useful_fraction
    # the seed's "preempted every 4-6 hours" per node makes a 32-node job fail every
    # 5 h / 32 = 9.4 minutes: restarts (10 min) alone exceed it, nothing useful is left
    assert seed_claim == 0.0
    # with no interruption the result is the throughput model's own goodput
    fail = FailureConfig()
    assert hw == pytest.approx(clusters.hardware_useful_fraction[-1])
    assert fail.restart_s == 600.0


def test_break_even_price_makes_the_two_costs_equal(clusters: ClusterArrays) -> None:
    wl = Workload(20e9, 500.0, mode="year_of_work", utilization=0.8)
    p = plan(MODEL, wl, clusters, PAYMENTS)
    win, other = int(p.ranked[0]), int(p.ranked[-1])
    be = break_even_price(p, other, win)
    terms = p.payments[int(p.payment_idx[other])]
    if be.lever == "usd_per_gpu_hour":
        fixed = float(p.terms.usd_per_gpu_hour[other]) - terms.usd_per_gpu_hour
        new = replace(terms, usd_per_gpu_hour=be.price_break_even - fixed)
    else:
        fixed = float(p.terms.upfront_usd_per_gpu[other]) - terms.upfront_usd_per_gpu
        new = replace(terms, upfront_usd_per_gpu=be.price_break_even - fixed)
    pays = tuple(new if t is terms else t for t in p.payments)
    q = plan(MODEL, wl, clusters, pays)
    assert q.cost.total_usd[other] == pytest.approx(p.cost.total_usd[win], rel=1e-9)


def test_break_even_utilization_makes_owned_cost_what_rented_costs(clusters: ClusterArrays) -> None:
    wl = Workload(20e9, 500.0, mode="year_of_work", utilization=0.5)
    p = plan(MODEL, wl, clusters, PAYMENTS)
    owned = int(np.flatnonzero(p.payment_idx == 3)[0])
    rented = int(np.flatnonzero(p.payment_idx == 0)[0])
    be = break_even_utilization(p, owned, rented)
    assert 0 < be.utilization <= 1
    assert be.wins_somewhere
    q = plan(MODEL, replace(wl, utilization=be.utilization), clusters, PAYMENTS)
    assert q.cost.total_usd[owned] == pytest.approx(q.cost.total_usd[rented], rel=1e-9)


def test_infeasible_request_says_what_is_closest_and_what_fixes_it(clusters: ClusterArrays
                                                                  ) -> None:
    wl = Workload(20e9, 5.0, budget_usd=10_000.0, mode="year_of_work", utilization=0.8)
    p = plan(MODEL, wl, clusters, PAYMENTS)
    assert len(p.ranked) == 0
    inf = explain_infeasible(p)
    runnable = np.isfinite(p.cost.total_usd)
    assert inf.fastest_within_budget is not None
    assert inf.deadline_needed_hours == pytest.approx(
        p.wall_hours[runnable & p.within_budget].min())
    # nothing meets 5 h: the GPUs needed come from the fastest option at linear scaling
    k = int(np.flatnonzero(runnable)[np.argmin(p.wall_hours[runnable])])
    assert inf.cheapest_meeting_deadline is None
    assert inf.gpus_needed == int(np.ceil(p.gpus[k] * p.wall_hours[k] / 5.0))
    assert "at least" in inf.message
    # loosen the deadline only: the cheapest on-time option gives the budget needed
    q = plan(MODEL, replace(wl, deadline_hours=150.0, budget_usd=1.0), clusters, PAYMENTS)
    inf = explain_infeasible(q)
    assert inf.budget_needed_usd == pytest.approx(
        q.cost.total_usd[np.isfinite(q.cost.total_usd) & q.meets_deadline].min())


def test_monthly_budget_rule() -> None:
    single = Workload(1e9, 48.0, budget_usd_per_month=500_000.0)
    # 41 h touches one month; 1,000 h touches two (ceil(1000/730) = 2)
    assert single.budget_for_run(np.array([41.0, 1000.0])).tolist() == [500_000.0, 1_000_000.0]
    queue = Workload(1e9, 48.0, budget_usd_per_month=500_000.0, mode="year_of_work",
                     utilization=0.5)
    # a 73-hour run at 50% utilization occupies 146 h = 0.2 month: $100,000
    assert queue.budget_for_run(np.array([73.0]))[0] == pytest.approx(100_000.0)


def test_fabric_value_is_the_capex_at_which_costs_tie(clusters: ClusterArrays) -> None:
    wl = Workload(20e9, 500.0, mode="year_of_work", utilization=0.8)
    p = plan(MODEL, wl, clusters, (OWNED,))
    ndr = [k for k in range(len(p)) if p.clusters.specs[int(p.cluster_idx[k])].nodes == 16]
    names = [p.clusters.specs[int(p.cluster_idx[k])].scale_out.name for k in ndr]
    base = ndr[names.index("RoCEv2 untuned")]
    better = ndr[names.index("InfiniBand NDR")]
    (v,) = fabric_value(p, [better], base)
    assert v.hours_saved_per_run > 0
    assert v.usd_saved_per_run > 0
    # pricing the NDR network at worth_up_to makes it cost exactly what untuned RoCE costs
    spec = p.clusters.specs[int(p.cluster_idx[better])]
    specs = list(p.clusters.specs)
    specs[int(p.cluster_idx[better])] = replace(spec, network_capex_usd=v.worth_up_to)
    q = plan(MODEL, wl, replace(p.clusters, specs=tuple(specs)), (OWNED,))
    assert q.cost.total_usd[better] == pytest.approx(p.cost.total_usd[base], rel=1e-9)


def test_layout_reuse_shortcut_never_beats_the_exact_search() -> None:
    specs = [_spec(16, f, over) for f in ("InfiniBand NDR", "RoCEv2 untuned", "Ethernet TCP 100G")
             for over in (1.0, 4.0)]
    exact = evaluate_clusters(MODEL, TRAINING, specs)
    quick = evaluate_clusters(MODEL, TRAINING, specs, top_k_reuse=8)
    # the first variant of the size is searched in full either way
    assert quick.tokens_per_s[0] == exact.tokens_per_s[0]
    # later variants only re-evaluate 8 layouts: never faster than the full search
    assert np.all(quick.tokens_per_s <= exact.tokens_per_s * (1 + 1e-12))
    assert quick.layouts_evaluated < exact.layouts_evaluated
    assert quick.notes
