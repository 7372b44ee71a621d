"""TCO use case: resolve prices as of a date (request overrides first), build every option the
prices allow, run the finance model, shape the answer.

An option whose price is missing is omitted and listed under `omitted` with the missing
prices named; the request fails (422 naming `gpu_model`) only when no option can be priced.
"""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from app.errors import InvalidInput, NotFound
from app.modelling.finance import profiles
from app.modelling.finance.compare import Scenario, compare, pair_answers, sweep_pv_usd
from app.modelling.finance.mixed import Mixed
from app.modelling.finance.money import HOURS_PER_MONTH, cumulative_usd
from app.modelling.finance.network import NetworkDesign, network_bill
from app.modelling.finance.options import (
    Billing,
    Facility,
    Option,
    Owned,
    Ownership,
    Rental,
    capex_lines,
    depreciation_usd,
    spot_hours_multiplier,
    staff_fte,
)
from app.modelling.finance.sensitivity import monte_carlo, tornado
from app.pricing.book import price_book
from app.pricing.models import PriceKind, PricePoint, PriceUnit, PurchaseOption
from app.pricing.service import as_of_instant
from app.tco.defaults import RANGES
from app.tco.examples import EXAMPLES
from app.tco.schemas import (
    BreakEven,
    ClaimResult,
    ExampleResult,
    ExampleSummary,
    MonteCarloResult,
    OmittedOption,
    OptionResult,
    PriceOverrides,
    PriceUsed,
    ScheduleProfile,
    Sensitivity,
    SeriesProfile,
    TcoRequest,
    TcoResponse,
    TcoSweepRequest,
    TcoSweepResponse,
    TornadoEntry,
)

EQ = PriceKind.equipment
PAYMENTS = ("no_upfront", "partial_upfront", "all_upfront")
GENERAL_NOTES = (
    "Months are 730 h; flows are paid at the start of each month; NPV discounts month m by "
    "(1 + r)^(−m/12) at the annual discount rate r (the cost of capital).",
    "Committed terms (reserved, savings plans, committed GPU clouds) are billed for every hour "
    "of every term; the part of the last term beyond the horizon is booked in the final month.",
    "Break-even utilizations assume a constant utilization; mixed strategies are evaluated at "
    "the requested profile only.",
)


def _describe(filters: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None)


@dataclass
class _Prices:
    """Looks prices up once each, remembers what was used and what was missing."""

    session: Session
    as_of: date
    overrides: PriceOverrides
    used: dict[str, PriceUsed] = field(default_factory=dict)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def find(self, **filters: Any) -> list[PricePoint]:
        """Points in force matching `filters` (None matches anything), in the store's order."""
        return price_book(self.session, as_of_instant(self.as_of)).find(**filters)

    def offers(self, **filters: Any) -> list[PricePoint]:
        """`find` without market observations: what a rental option may be priced from."""
        return price_book(self.session, as_of_instant(self.as_of)).offers(**filters)

    def point(self, **filters: Any) -> PricePoint | None:
        found = self.find(**filters)
        if not found:
            return None
        p = found[0]
        self.used[p.item.item_key] = PriceUsed(
            name=p.item.name, amount=float(p.amount), unit=p.item.unit.value,
            source=p.source.name, effective_from=p.effective_from.date())
        return p

    def cheapest_per_node(self, gpus_per_node: int, **filters: Any) -> PricePoint | None:
        """The cheapest row in force for whole nodes of `gpus_per_node` GPUs (rows without a
        GPU count are taken as whole nodes): e.g. the cheapest availability zone for spot.
        Only offers: every caller prices a rental from it."""
        points = [p for p in self.offers(**filters) if p.item.gpu_count in (None, gpus_per_node)]
        if not points:
            return None
        best = min(points, key=lambda p: p.amount)
        self.used[best.item.item_key] = PriceUsed(
            name=best.item.name, amount=float(best.amount), unit=best.item.unit.value,
            source=best.source.name, effective_from=best.effective_from.date())
        return best

    def amount(self, override: str, missing: list[str], range_key: str | None = None,
               **filters: Any) -> float:
        """The override if given, else the store's price; records a miss (returns 0).
        `regions=(…)` tries several regions in order; `per_node=G` takes the cheapest row for
        G-GPU nodes."""
        given = getattr(self.overrides, override)
        if given is not None:
            self.used[f"request/{override}"] = PriceUsed(
                name=override, amount=float(given), unit="as named", source="request",
                effective_from=None)
            return float(given)
        regions = filters.pop("regions", None) or (filters.pop("region", None),)
        per_node = filters.pop("per_node", None)
        p = None
        for region in regions:  # the first region with a price wins
            p = self.point(**filters, region=region) if per_node is None \
                else self.cheapest_per_node(per_node, **filters, region=region)
            if p is not None:
                break
        if p is None:
            where = f", region in {list(regions)}" if regions != (None,) else ""
            missing.append(f"{override} ({_describe(filters)}{where})")
            return 0.0
        if range_key and p.low is not None and p.high is not None:
            self.ranges[range_key] = (float(p.low), float(p.high))
        return float(p.amount)


@dataclass
class _Built:
    options: dict[str, Option | Mixed] = field(default_factory=dict)
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # key → (label, family)
    omitted: list[OmittedOption] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, label: str, family: str, option: Option | Mixed) -> None:
        self.options[key] = option
        self.labels[key] = (label, family)

    def omit(self, key: str, label: str, missing: list[str]) -> None:
        self.omitted.append(OmittedOption(key=key, label=label, missing=missing))


def _profile(req: TcoRequest) -> profiles.UtilizationProfile:
    p = req.profile
    if isinstance(p, ScheduleProfile):
        return profiles.schedule(p.hours_per_day, p.days_per_week, req.months, p.node_fraction)
    if isinstance(p, SeriesProfile):
        return profiles.series(p.monthly_utilization)
    u = p.utilization if p is not None else req.utilization
    return profiles.constant(u, req.months)


def _facility_regions(region: str) -> tuple[str, ...]:
    """Where to look for electricity, staff and colocation rows: the request's region, then
    its country ("us-east-1" → "us"), as the snapshot keys them."""
    country = region.split("-")[0]
    return (region, country) if country != region else (region,)


def _with_power(prices: _Prices, usd_override: float | None, kw_override: float | None,
                name: str, missing: list[str], **filters: Any) -> tuple[float, float | None]:
    """(price, kW) of a powered item: request values first, else the store row (its power_w).
    kW is None when nobody knows it."""
    point = None
    if usd_override is None or kw_override is None:
        point = prices.point(**filters)
    if usd_override is None and point is None:
        missing.append(f"{name} ({_describe(filters)})")
    usd = usd_override if usd_override is not None else float(point.amount) if point else 0.0
    kw = kw_override if kw_override is not None else \
        float(point.item.power_w) / 1000.0 if point and point.item.power_w else None
    return usd, kw


def _ownership(req: TcoRequest, prices: _Prices,
               built: _Built) -> tuple[Ownership, list[str], float]:
    """The buy inputs, the prices missing for them, and the electricity price. Optional
    items without a price (storage, racks, front-end switches) count $0, said in a note."""
    a, ov, r = req.assumptions, prices.overrides, _facility_regions(req.region)
    missing: list[str] = []
    unpriced: list[str] = []
    gpu = prices.amount("gpu_usd_each", missing, "buy.gpu_usd_each", kind=EQ, category="gpu",
                        gpu_model=req.gpu_model)
    server, busy_kw = _with_power(prices, ov.server_usd_per_node, ov.server_busy_kw,
                                  "server_usd_per_node", missing, kind=EQ, category="server",
                                  gpu_count=a.gpus_per_node)
    if busy_kw is None:
        missing.append("server_busy_kw (no power_w on the server row)")
    fabric = "ib_switch" if a.fabric == "infiniband" else "eth_switch"
    switch_usd, switch_kw = _with_power(
        prices, ov.ib_switch_usd_each if fabric == "ib_switch" else ov.eth_switch_usd_each,
        ov.ib_switch_kw_each, f"{fabric}_usd_each", missing, kind=EQ, category=fabric)
    parts = {name: prices.amount(f"{name}_usd_each", [], kind=EQ, category=name)
             for name in ("nic", "cable", "transceiver")}
    itemised = all(parts.values())
    kit = 0.0 if itemised else prices.amount(
        "node_network_kit_usd_per_node", missing, kind=EQ, category="node_network_kit")
    eth = 0.0 if a.frontend_ports_per_node == 0 else prices.amount(
        "eth_switch_usd_each", unpriced, kind=EQ, category="eth_switch")
    rack = prices.amount("rack_usd_each", unpriced, kind=EQ, category="rack")
    storage = prices.amount("storage_usd", unpriced, kind=EQ, category="storage")
    idle = prices.amount("idle_power_fraction", missing, "buy.idle_power_fraction",
                         kind=PriceKind.facility, category="idle_power_fraction")
    pue = prices.amount("pue", missing, "buy.pue", kind=PriceKind.facility, category="pue")
    kwh = prices.amount("electricity_usd_per_kwh", missing, kind=PriceKind.electricity,
                        regions=r)
    staff = prices.amount("staff_usd_per_fte_year", missing, kind=PriceKind.staff, regions=r)
    if unpriced:
        built.notes.append("Buy: no price for " + "; ".join(unpriced) + " — counted as $0.")
    if not itemised:
        built.notes.append("Buy: NICs, cables and transceivers are not all priced, so the "
                           "per-node network kit price stands in for them.")
    own = Ownership(
        gpu_usd_each=gpu, server_usd_per_node=server, busy_kw_per_node=busy_kw or 0.0,
        idle_power_fraction=idle, ib_switch_usd_each=switch_usd,
        ib_switch_kw_each=switch_kw or 0.0,
        eth_switch_usd_each=eth,
        nic_usd_each=parts["nic"] if itemised else 0.0,
        cable_usd_each=parts["cable"] if itemised else 0.0,
        transceiver_usd_each=parts["transceiver"] if itemised else 0.0,
        node_kit_usd_per_node=kit, rack_usd_each=rack, storage_usd=storage,
        installation_fraction=a.installation_fraction, spares_fraction=a.spares_fraction,
        support_fraction_per_year=a.support_fraction_per_year,
        staff_usd_per_fte_year=staff, nodes_per_fte=a.nodes_per_fte,
        staff_fte=a.staff_fte or 0.0,
        electricity_usd_per_kwh=kwh, pue=pue, resale_decline_per_year=a.resale_decline_per_year,
        nodes_per_rack=a.nodes_per_rack, depreciation_months=a.depreciation_months,
        network=NetworkDesign(
            nics_per_node=a.nics_per_node, radix=a.switch_radix,
            oversubscription=a.oversubscription, transceivers_per_link=a.transceivers_per_link,
            frontend_ports_per_node=a.frontend_ports_per_node if eth else 0),
    )
    return own, missing, kwh


def _add_owned(req: TcoRequest, prices: _Prices, built: _Built) -> None:
    own, missing, kwh = _ownership(req, prices, built)
    if missing:
        built.omit("buy", "Buy, owned facility", missing)
    else:
        built.add("buy", "Buy, owned facility", "own", Owned(own, Facility()))
    colo_missing = list(missing)
    a = req.assumptions
    colo = prices.amount("colo_usd_per_kw_month", colo_missing, kind=PriceKind.colocation,
                         regions=_facility_regions(req.region))
    if colo_missing:
        built.omit("colo", "Buy, colocated", colo_missing)
        return
    built.add("colo", "Buy, colocated", "own", Owned(own, Facility(
        colocated=True, colo_usd_per_kw_month=colo, contracted_headroom=a.colo_contracted_headroom,
        colo_metered_usd_per_kwh=kwh if a.colo_power_metered else 0.0)))


def _cloud_extras(req: TcoRequest) -> float:
    a = req.assumptions
    return (a.cloud_storage_tb * a.cloud_storage_usd_per_tb_month
            + a.egress_tb_per_month * a.egress_usd_per_tb + a.cloud_extras_usd_per_month)


def _years(term_months: int) -> str:
    return f"{term_months // 12}y" if term_months % 12 == 0 else f"{term_months}m"


def _add_aws(req: TcoRequest, prices: _Prices, built: _Built) -> None:
    a, ov = req.assumptions, prices.overrides
    extras, managed = _cloud_extras(req), a.managed_overhead_fraction
    aws = {"kind": PriceKind.cloud_instance, "provider": "aws", "region": req.region,
           "gpu_model": req.gpu_model}

    def hourly(key: str, label: str, override: str, billing: Billing, filters: dict[str, Any],
               multiplier: float = 1.0) -> None:
        missing: list[str] = []
        rate = prices.amount(override, missing, per_node=a.gpus_per_node, **filters)
        if missing:
            built.omit(key, label, missing)
        elif not np.isfinite(multiplier):
            built.notes.append(f"{label} omitted: interruptions come faster than work survives "
                               "(spot_interruptions_per_hour × (checkpoint/2 + restart) ≥ 1).")
        else:
            built.add(key, label, "cloud", Rental(billing, rate, hours_multiplier=multiplier,
                                                  managed_overhead_fraction=managed,
                                                  extras_usd_per_month=extras))

    hourly("aws_on_demand", "AWS on-demand", "aws_on_demand_usd_per_node_hour",
           Billing.used_hours, {**aws, "purchase_option": PurchaseOption.on_demand})
    spot_x = spot_hours_multiplier(a.spot_interruptions_per_hour,
                                   a.spot_checkpoint_interval_hours, a.spot_restart_hours)
    hourly("aws_spot", "AWS spot", "aws_spot_usd_per_node_hour", Billing.used_hours,
           {"kind": PriceKind.spot, "region": req.region, "gpu_model": req.gpu_model}, spot_x)
    hourly("aws_capacity_block", "AWS capacity blocks", "aws_capacity_block_usd_per_node_hour",
           Billing.booked_days, {**aws, "purchase_option": PurchaseOption.capacity_block})

    quotes: list[tuple[int, str, float, float]]
    if ov.aws_reserved is not None:
        quotes = [(q.term_months, q.payment_option, q.usd_per_node_hour, q.upfront_usd_per_node)
                  for q in ov.aws_reserved]
    else:
        quotes = []
        for term in (12, 36):
            for pay in PAYMENTS:
                f = {**aws, "purchase_option": PurchaseOption.reserved, "term_months": term,
                     "payment_option": pay}
                p = prices.cheapest_per_node(a.gpus_per_node, **f)
                key = f"aws_reserved_{_years(term)}_{pay}"
                if p is None:
                    built.omit(key, f"AWS reserved {_years(term)} {pay.replace('_', ' ')}",
                               [f"reserved ({_describe(f)})"])
                else:
                    quotes.append((term, pay, float(p.amount), float(p.upfront_usd or 0)))
    for term, pay, rate, upfront in quotes:
        built.add(f"aws_reserved_{_years(term)}_{pay}",
                  f"AWS reserved {_years(term)} {pay.replace('_', ' ')}", "cloud",
                  Rental(Billing.committed, rate, term, upfront, 1.0, managed, extras))

    plans: list[tuple[int, float]]
    if ov.aws_savings_plans is not None:
        plans = [(q.term_months, q.usd_per_node_hour) for q in ov.aws_savings_plans]
    else:
        plans = []
        for term in (12, 36):
            f = {**aws, "purchase_option": PurchaseOption.compute_savings_plan,
                 "term_months": term}
            p = prices.cheapest_per_node(a.gpus_per_node, **f)
            if p is None:
                built.omit(f"aws_savings_plan_{_years(term)}",
                           f"AWS compute savings plan {_years(term)}",
                           [f"savings plan ({_describe(f)})"])
            else:
                plans.append((term, float(p.amount)))
    for term, rate in plans:
        built.add(f"aws_savings_plan_{_years(term)}", f"AWS compute savings plan {_years(term)}",
                  "cloud", Rental(Billing.committed, rate, term, 0.0, 1.0, managed, extras))


def _add_gpu_clouds(req: TcoRequest, prices: _Prices, built: _Built) -> None:
    gpn, extras = req.assumptions.gpus_per_node, _cloud_extras(req)
    quotes: list[tuple[str, str, int, float]]
    if prices.overrides.gpu_clouds is not None:
        quotes = [(q.provider, q.purchase_option, q.term_months, q.usd_per_gpu_hour)
                  for q in prices.overrides.gpu_clouds]
    else:
        points = prices.offers(kind=PriceKind.gpu_cloud, gpu_model=req.gpu_model)
        quotes = []
        for p in points:
            prices.used[p.item.item_key] = PriceUsed(
                name=p.item.name, amount=float(p.amount), unit=p.item.unit.value,
                source=p.source.name, effective_from=p.effective_from.date())
            bought = p.item.purchase_option or PurchaseOption.on_demand
            per_gpu = float(p.amount) if p.item.unit is PriceUnit.usd_per_gpu_hour \
                else float(p.amount) / (p.item.gpu_count or gpn)  # an instance-hour rate
            quotes.append((p.item.provider or "gpu_cloud", str(bought.value),
                           p.item.term_months or 0, per_gpu))
        if not quotes:
            built.omit("gpu_cloud", "Other GPU clouds",
                       [f"gpu_cloud (gpu_model={req.gpu_model})"])
    a = req.assumptions
    spot_x = spot_hours_multiplier(a.spot_interruptions_per_hour,
                                   a.spot_checkpoint_interval_hours, a.spot_restart_hours)
    for provider, option, term, rate in quotes:
        key, label = _gpu_cloud_name(provider, option, term)
        if option == "committed":
            rental = Rental(Billing.committed, rate * gpn, max(term, 1),
                            extras_usd_per_month=extras)
        elif option == "spot":  # preemptible: re-work after interruptions, as for AWS spot
            if not np.isfinite(spot_x):
                continue
            rental = Rental(Billing.used_hours, rate * gpn, hours_multiplier=spot_x,
                            extras_usd_per_month=extras)
        else:
            rental = Rental(Billing.used_hours, rate * gpn, extras_usd_per_month=extras)
        built.add(key, label, "gpu_cloud", rental)


def _gpu_cloud_name(provider: str, option: str, term: int) -> tuple[str, str]:
    """Option key and label: each provider's on-demand, spot and committed offers apart."""
    name = provider.replace("_", " ").title() if provider.islower() else provider
    if option == "committed":
        span = f"{term} months" if term else "term not stated, billed monthly"
        return f"gpu_cloud_{provider}_committed_{term}m", f"{name} committed ({span})"
    if option == "spot":
        return f"gpu_cloud_{provider}_spot", f"{name} spot (interruptions re-worked)"
    return f"gpu_cloud_{provider}_on_demand", f"{name} on-demand"


def _committed_usd_per_node(r: Rental, months: int) -> float:
    """What one node of a commitment costs over the horizon: every started term in full."""
    term = max(r.term_months, 1)
    terms = -(-months // term)
    return terms * (term * r.usd_per_node_hour * HOURS_PER_MONTH + r.upfront_usd_per_node)


def _add_mixed(built: _Built, months: int) -> None:
    rentals = {k: o for k, o in built.options.items() if isinstance(o, Rental)}
    committed = {k: o for k, o in rentals.items()
                 if o.billing is Billing.committed and k.startswith("aws_")}
    peaks = [(k, p) for k, p in (("aws_on_demand", "on-demand"), ("aws_spot", "spot"))
             if k in rentals]
    if committed:
        base_key = min(committed, key=lambda k: _committed_usd_per_node(committed[k], months))
        base_label = built.labels[base_key][0].replace("AWS ", "")
        for peak_key, peak_name in peaks:
            built.add(f"mixed_reserved_{peak_name.replace('-', '_')}",
                      f"Mixed: {base_label} baseline + {peak_name} peak", "mixed",
                      Mixed(committed[base_key], rentals[peak_key]))
    own = built.options.get("buy")
    if isinstance(own, Owned) and "aws_on_demand" in rentals:
        built.add("mixed_buy_on_demand", "Mixed: owned baseline + on-demand peak", "mixed",
                  Mixed(own, rentals["aws_on_demand"]))


def _none_if_nan(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _pairs(options: dict[str, Option | Mixed]) -> list[tuple[str, str]]:
    owned = [k for k, o in options.items() if isinstance(o, Owned)]
    rented = {k: o for k, o in options.items() if isinstance(o, Rental)}
    pairs = [(o, r) for o in owned for r in rented]
    if "aws_on_demand" in rented:
        pairs += [(k, "aws_on_demand") for k, o in rented.items()
                  if o.billing is Billing.committed]
    return pairs


def _requested_pairs(req: TcoRequest, built: _Built,
                     plain: dict[str, Option]) -> list[tuple[str, str]]:
    if req.break_even_pairs is None:
        return _pairs(built.options)
    for i, pair in enumerate(req.break_even_pairs):
        for key in pair:
            if key not in plain:
                why = "a mixed strategy (not affine in utilization)" if key in built.options \
                    else "not among the options priced: " + ", ".join(plain)
                raise InvalidInput(f"break_even_pairs.{i}", f"{key!r} is {why}")
    return [(a, b) for a, b in req.break_even_pairs]


def _build(session: Session, req: TcoRequest, as_of: date) -> tuple[_Prices, _Built]:
    """Every option the prices allow (mixed strategies not yet added)."""
    prices = _Prices(session, as_of, req.prices)
    built = _Built()
    _add_owned(req, prices, built)
    _add_aws(req, prices, built)
    _add_gpu_clouds(req, prices, built)
    if not built.options:
        missing = "; ".join(m for o in built.omitted for m in o.missing)
        raise InvalidInput("gpu_model", f"no option can be priced for {req.gpu_model} in "
                           f"{req.region} as of {as_of.isoformat()}: missing {missing}")
    return prices, built


def compute_tco(session: Session, req: TcoRequest) -> TcoResponse:
    as_of = req.as_of or datetime.now(UTC).date()
    a = req.assumptions
    prices, built = _build(session, req, as_of)
    _add_mixed(built, req.months)
    scenario = Scenario(req.nodes, a.gpus_per_node, _profile(req), a.discount_rate_annual,
                        a.goodput_fraction)
    outcomes = {o.key: o for o in compare(scenario, built.options)}
    plain: dict[str, Option] = {k: o for k, o in built.options.items()
                                if not isinstance(o, Mixed)}
    answers = pair_answers(scenario, plain, outcomes, _requested_pairs(req, built, plain))
    results = [_option_result(req, built, o.key, o) for o in outcomes.values()]
    sensitivity, mc = _sensitivity(req, scenario, plain, outcomes, prices.ranges)
    own = next((o for o in plain.values() if isinstance(o, Owned)), None)
    return TcoResponse(
        request=req, as_of=as_of, gpus=req.nodes * a.gpus_per_node, months=req.months,
        mean_utilization=float(scenario.profile.utilization.mean()),
        gpu_hours_used=scenario.gpu_hours_used, options=results, omitted=built.omitted,
        cheapest=min(results, key=lambda r: r.total_usd).key,
        cheapest_npv=min(results, key=lambda r: r.npv_usd).key,
        break_even=[BreakEven(first=x.first, second=x.second,
                              utilization=_none_if_nan(x.break_even_utilization),
                              first_cheaper_above=x.first_cheaper_above,
                              payback_month=None if np.isnan(x.payback_month)
                              else int(x.payback_month)) for x in answers],
        sensitivity=sensitivity, monte_carlo=mc,
        prices_used=list(prices.used.values()),
        network=_network(req, own), assumptions=_assumptions(req, own),
        notes=[*built.notes, *GENERAL_NOTES])


def _option_result(req: TcoRequest, built: _Built, key: str, o: Any) -> OptionResult:
    label, family = built.labels[key]
    option = built.options[key]
    capex = depreciation = None
    notes: list[str] = []
    if isinstance(option, Owned):
        lines = capex_lines(option.ownership, req.nodes, req.assumptions.gpus_per_node)
        capex = {k: float(v) for k, v in lines.items()}
        depreciation = depreciation_usd(sum(capex.values()), req.months,
                                        option.ownership.depreciation_months).tolist()
        notes.append("Depreciation is the straight-line book schedule (non-cash); cash flows "
                     "carry capex in month 0 and the resale value as an inflow in the last month.")
    if isinstance(option, Rental) and option.hours_multiplier > 1.0:
        notes.append(f"Spot: {option.hours_multiplier:.3f} billed hours per useful hour "
                     "(work lost since the last checkpoint plus restart, per interruption).")
    if key.startswith("aws_savings_plan"):
        notes.append("A compute savings plan is modelled as an hourly commitment covering the "
                     "whole cluster at the plan rate, owed for every hour of its term.")
    if isinstance(option, Mixed):
        notes.append(f"Baseline of {o.baseline_nodes} of {req.nodes} nodes minimises the NPV.")
    return OptionResult(
        key=key, label=label, family=family, total_usd=o.total_usd, npv_usd=o.npv_usd,
        usd_per_gpu_hour_used=_none_if_nan(o.usd_per_gpu_hour_used),
        usd_per_useful_gpu_hour=_none_if_nan(o.usd_per_useful_gpu_hour),
        monthly_usd=o.monthly_usd.tolist(), cumulative_usd=cumulative_usd(o.monthly_usd).tolist(),
        baseline_nodes=o.baseline_nodes, capex_usd=capex,
        depreciation_usd_per_month=depreciation, notes=notes)


def _sensitivity(req: TcoRequest, scenario: Scenario, plain: dict[str, Option],
                 outcomes: dict[str, Any], store_ranges: dict[str, tuple[float, float]]
                 ) -> tuple[Sensitivity | None, MonteCarloResult | None]:
    buy_key = next((k for k in ("buy", "colo") if k in plain), None)
    rented = [k for k, o in plain.items() if isinstance(o, Rental)]
    if buy_key is None or not rented:
        return None, None
    rent_key = min(rented, key=lambda k: outcomes[k].npv_usd)
    a = req.assumptions
    ranges = {**RANGES, **store_ranges}
    base, rows = tornado(plain[buy_key], plain[rent_key], scenario, ranges, a.sensitivity_swing)
    sens = Sensitivity(buy=buy_key, rent=rent_key, base_difference_usd=base, rows=[
        TornadoEntry(input=r.name, base_value=r.base_value, low_value=r.low_value,
                     high_value=r.high_value, difference_at_low_usd=r.difference_at_low_usd,
                     difference_at_high_usd=r.difference_at_high_usd, swing_usd=r.swing_usd)
        for r in rows])
    if a.monte_carlo_draws == 0:
        return sens, None
    mc = monte_carlo(plain[buy_key], plain[rent_key], scenario, ranges, a.sensitivity_swing,
                     a.monte_carlo_draws, a.monte_carlo_seed)
    return sens, MonteCarloResult(
        draws=mc.draws, seed=a.monte_carlo_seed, buy_npv_usd_p10_p50_p90=mc.buy_pv_usd,
        rent_npv_usd_p10_p50_p90=mc.rent_pv_usd, difference_usd_p10_p50_p90=mc.difference_usd,
        probability_buy_cheaper=mc.probability_buy_cheaper)


def _network(req: TcoRequest, own: Owned | None) -> dict[str, float]:
    if own is None:
        return {}
    bill = network_bill(req.nodes, own.ownership.network)
    return {"leaf_switches": float(bill.leaf_switches), "spine_switches": float(
        bill.spine_switches), "nics": float(bill.nics), "cables": float(bill.cables),
        "transceivers": float(bill.transceivers), "eth_switches": float(bill.eth_switches)}


def _assumptions(req: TcoRequest, own: Owned | None) -> dict[str, float]:
    a = req.assumptions
    out = {"hours_per_month": HOURS_PER_MONTH, "discount_rate_annual": a.discount_rate_annual,
           "goodput_fraction": a.goodput_fraction,
           "spot_hours_multiplier": spot_hours_multiplier(
               a.spot_interruptions_per_hour, a.spot_checkpoint_interval_hours,
               a.spot_restart_hours),
           "cloud_extras_usd_per_month": _cloud_extras(req)}
    if not np.isfinite(out["spot_hours_multiplier"]):  # spot is omitted then (see notes)
        del out["spot_hours_multiplier"]
    if own is not None:
        o = own.ownership
        out |= {"staff_fte": float(staff_fte(o, req.nodes)),
                "power_busy_kw_per_node": o.busy_kw_per_node,
                "power_idle_kw_per_node": o.busy_kw_per_node * o.idle_power_fraction,
                "pue": o.pue, "electricity_usd_per_kwh": o.electricity_usd_per_kwh}
    return out


def list_examples() -> list[ExampleSummary]:
    return [ExampleSummary(name=e.name, title=e.title, source=e.source, notes=list(e.notes))
            for e in EXAMPLES.values()]


def run_example(session: Session, name: str) -> ExampleResult:
    example = EXAMPLES.get(name)
    if example is None:
        raise NotFound(f"no TCO example named {name!r}; see /api/v1/tco/examples")
    result = compute_tco(session, example.request)
    by_key = {o.key: o for o in result.options}
    claims = []
    for c in example.claims:
        option = by_key.get(c.option)
        computed = None if option is None else option.total_usd if c.measure == "total" \
            else option.total_usd / result.months
        claims.append(ClaimResult(what=c.what, article_usd=c.article_usd, option=c.option,
                                  measure=c.measure, computed_usd=computed))
    return ExampleResult(name=example.name, title=example.title, source=example.source,
                         notes=list(example.notes), claims=claims, result=result)


def compute_sweep(session: Session, sweep: TcoSweepRequest) -> TcoSweepResponse:
    """PV of every non-mixed option over a utilization × horizon grid (constant utilization),
    and the cheapest option in each cell: where the answer flips, at a glance."""
    req = sweep.tco
    as_of = req.as_of or datetime.now(UTC).date()
    _, built = _build(session, req, as_of)
    keys = [k for k, o in built.options.items() if not isinstance(o, Mixed)]
    plain = [o for o in built.options.values() if not isinstance(o, Mixed)]
    us = np.asarray(sweep.utilizations, dtype=np.float64)
    hs = np.asarray(sweep.horizons_months, dtype=np.int64)
    pv = sweep_pv_usd(plain, req.nodes, req.assumptions.gpus_per_node, us, hs,
                      req.assumptions.discount_rate_annual)
    cheapest = np.argmin(pv, axis=0)
    return TcoSweepResponse(
        as_of=as_of, options=keys, labels=[built.labels[k][0] for k in keys],
        utilizations=sweep.utilizations, horizons_months=sweep.horizons_months,
        npv_usd=pv.tolist(), cheapest=[[keys[i] for i in row] for row in cheapest.tolist()],
        omitted=built.omitted)
