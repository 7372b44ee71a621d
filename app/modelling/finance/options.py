"""The ways to pay for a cluster, as vectorized monthly cash flows.

Every option maps (nodes, GPUs per node, utilization profile, horizon) to monthly flows of
shape (…, M): month m costs `flow[m]` US dollars, cash out positive (see money.py for the
month and discounting conventions). Two families:

- `Owned`: buy the hardware; run it in an owned facility or colocate it.
- `Rental`: pay an hourly rate per node, billed per hour used (on-demand, spot, GPU clouds),
  per booked day (EC2 Capacity Blocks) or for every hour of a committed term (reserved
  instances, savings plans, committed GPU-cloud contracts) — AWS EC2 pricing pages: "You pay
  for a Reserved Instance for every hour of its term, whether it is running or not."
- `Mixed`: own or reserve a baseline of nodes and rent the peak (see mixed.py).

Vectorization: every float field of `Ownership`, `Facility` and `Rental` may hold a numpy
array of shape (P, 1) to evaluate P variants at once (sensitivity, Monte Carlo); the node
count and the horizon may be arrays too (sweeps). Formulas use only broadcasting operations.
"""

import enum
from dataclasses import dataclass, field

import numpy as np

from app.modelling.finance.money import (
    HOURS_PER_MONTH,
    FloatArray,
    IntArray,
    active_months,
    last_month,
)
from app.modelling.finance.network import NetworkBill, NetworkDesign, network_bill
from app.modelling.finance.profiles import UtilizationProfile

Nodes = int | FloatArray
Horizon = int | IntArray


@dataclass(frozen=True)
class Ownership:
    """Buying the cluster: capex, running costs and what it is worth at the end."""

    gpu_usd_each: float
    server_usd_per_node: float  # chassis, CPUs, RAM, local NVMe: everything but the GPUs
    busy_kw_per_node: float  # IT power at full load
    idle_power_fraction: float = 0.30  # idle draw / busy draw
    ib_switch_usd_each: float = 0.0
    ib_switch_kw_each: float = 0.0
    eth_switch_usd_each: float = 0.0
    nic_usd_each: float = 0.0
    cable_usd_each: float = 0.0
    transceiver_usd_each: float = 0.0
    node_kit_usd_per_node: float = 0.0  # lump network/rack kit per node where not itemised
    rack_usd_each: float = 0.0
    storage_usd: float = 0.0  # shared file system for the whole cluster
    installation_fraction: float = 0.0  # of hardware capex
    spares_fraction: float = 0.0  # of GPU + server capex
    support_fraction_per_year: float = 0.0  # maintenance contracts, % of hardware capex / yr
    staff_usd_per_fte_year: float = 0.0
    nodes_per_fte: float = 64.0  # FTE = max(1, ⌈nodes / nodes_per_fte⌉) once any node is owned
    staff_fte: float = 0.0  # > 0: this many FTE whatever the node count (overrides the ratio)
    electricity_usd_per_kwh: float = 0.08
    pue: float = 1.3  # facility power / IT power (The Green Grid, White Paper #49)
    resale_decline_per_year: float = 0.30  # market value falls by this share every year
    nodes_per_rack: int = 4  # ~40 kW racks for 10.2 kW HGX nodes
    depreciation_months: int = 48  # book straight-line life (non-cash, reported only)
    network: NetworkDesign = field(default_factory=NetworkDesign)


@dataclass(frozen=True)
class Facility:
    """Where owned hardware runs. Owned: energy at $/kWh × PUE plus optional space cost.
    Colocation: contracted kW at $/kW-month, billed whether used or not; energy included in
    that price unless `colo_metered_usd_per_kwh` > 0."""

    colocated: bool = False
    space_usd_per_kw_month: float = 0.0  # owned facility cost per kW of IT capacity
    colo_usd_per_kw_month: float = 0.0
    contracted_headroom: float = 0.0  # contracted kW = peak IT kW × (1 + headroom)
    colo_metered_usd_per_kwh: float = 0.0


@dataclass(frozen=True)
class Owned:
    ownership: Ownership
    facility: Facility = field(default_factory=Facility)


class Billing(enum.StrEnum):
    used_hours = "used_hours"  # on-demand, spot, GPU clouds on demand
    booked_days = "booked_days"  # capacity blocks: booked by the day
    committed = "committed"  # every hour of every term


@dataclass(frozen=True)
class Rental:
    billing: Billing
    usd_per_node_hour: float  # recurring rate per node (instance) hour
    term_months: int = 0  # committed only
    upfront_usd_per_node: float = 0.0  # paid at the start of each term
    hours_multiplier: float = 1.0  # billed hours per useful hour (spot re-work, ≥ 1)
    managed_overhead_fraction: float = 0.0  # e.g. SageMaker on top of EC2
    extras_usd_per_month: float = 0.0  # cloud storage and egress


def capex_lines(own: Ownership, nodes: Nodes, gpus_per_node: int,
                bill: NetworkBill | None = None) -> dict[str, FloatArray]:
    """Capex by line, US dollars, for `nodes` nodes (zero for zero nodes)."""
    bill = bill or network_bill(nodes, own.network)
    n = np.asarray(nodes, dtype=np.float64)
    gpus = n * gpus_per_node * own.gpu_usd_each
    servers = n * own.server_usd_per_node
    network = (bill.ib_switches * own.ib_switch_usd_each
               + bill.eth_switches * own.eth_switch_usd_each + bill.nics * own.nic_usd_each
               + bill.cables * own.cable_usd_each + bill.transceivers * own.transceiver_usd_each
               + n * own.node_kit_usd_per_node)
    racks = np.ceil(n / own.nodes_per_rack) * own.rack_usd_each
    storage = np.where(n > 0, 1.0, 0.0) * own.storage_usd
    hardware = gpus + servers + network + racks + storage
    return {
        "gpus": np.asarray(gpus), "servers": np.asarray(servers), "network": np.asarray(network),
        "racks": np.asarray(racks), "storage": np.asarray(storage),
        "installation": np.asarray(hardware * own.installation_fraction),
        "spares": np.asarray((gpus + servers) * own.spares_fraction),
    }


def resale_usd(own: Ownership, lines: dict[str, FloatArray], horizon: Horizon) -> FloatArray:
    """Market value of the hardware at the end: hardware × (1 − decline)^(months / 12).
    Installation and spares are sunk."""
    hardware = lines["gpus"] + lines["servers"] + lines["network"] + lines["racks"]
    years = np.asarray(horizon, dtype=np.float64) / 12.0
    if np.ndim(horizon):
        years = years[..., None]
    return np.asarray((hardware + lines["storage"]) * (1.0 - own.resale_decline_per_year) ** years)


def depreciation_usd(capex_usd: float, months: int, life_months: int) -> FloatArray:
    """Straight-line book depreciation per month (non-cash; for the accounts, not the NPV)."""
    return np.where(np.arange(months) < life_months, capex_usd / life_months, 0.0)


def staff_fte(own: Ownership, nodes: Nodes) -> FloatArray:
    n = np.asarray(nodes, dtype=np.float64)
    derived = np.maximum(1.0, np.ceil(n / own.nodes_per_fte))
    return np.where(n > 0, np.where(own.staff_fte > 0, own.staff_fte, derived), 0.0)


def owned_flows(option: Owned, nodes: Nodes, gpus_per_node: int,
                profile: UtilizationProfile, horizon: Horizon) -> FloatArray:
    """Capex in month 0; facility, energy, staff and support every month; resale at the end.

    Monthly running cost = fixed + per_utilization × u[m]: energy follows
    nodes × (idle + u × (busy − idle)) kW; colocation bills the contracted kW regardless."""
    own, fac = option.ownership, option.facility
    months = profile.months
    bill = network_bill(nodes, own.network)
    n = np.asarray(nodes, dtype=np.float64)
    lines = capex_lines(own, n, gpus_per_node, bill)
    capex = sum(lines.values())
    switches_kw = bill.ib_switches * own.ib_switch_kw_each
    idle_kw = own.busy_kw_per_node * own.idle_power_fraction
    peak_kw = n * own.busy_kw_per_node + switches_kw
    base_kw = n * idle_kw + switches_kw  # drawn at zero utilization
    swing_kw = n * (own.busy_kw_per_node - idle_kw)  # added at full utilization
    if fac.colocated:
        usd_per_kwh = fac.colo_metered_usd_per_kwh * own.pue
        fixed = fac.colo_usd_per_kw_month * peak_kw * (1.0 + fac.contracted_headroom)
    else:
        usd_per_kwh = own.electricity_usd_per_kwh * own.pue
        fixed = fac.space_usd_per_kw_month * peak_kw
    hardware = capex - lines["installation"] - lines["spares"]
    fixed = (fixed + usd_per_kwh * HOURS_PER_MONTH * base_kw
             + staff_fte(own, n) * own.staff_usd_per_fte_year / 12.0
             + own.support_fraction_per_year * hardware / 12.0)
    per_u = usd_per_kwh * HOURS_PER_MONTH * swing_kw
    running = fixed + per_u * profile.utilization
    first = (np.arange(months) == 0).astype(np.float64)
    flows = (capex * first + running * active_months(horizon, months)
             - resale_usd(own, lines, horizon) * last_month(horizon, months))
    return np.asarray(flows)


def rental_flows(option: Rental, nodes: Nodes, profile: UtilizationProfile,
                 horizon: Horizon, with_extras: bool = True) -> FloatArray:
    """Hourly charges × (1 + managed overhead) + extras (unless `with_extras` is False: mixed
    strategies pay them once), per the billing rule."""
    months = profile.months
    n = np.asarray(nodes, dtype=np.float64)
    active = active_months(horizon, months)
    if option.billing is Billing.committed:
        term = np.maximum(option.term_months, 1)  # an int, or a (P, 1) array when batched
        starts = (np.arange(months) % term == 0).astype(np.float64)
        h = np.asarray(horizon, dtype=np.float64)
        h = h[..., None] if np.ndim(horizon) else h
        owed_after = np.ceil(h / term) * term - h  # the rest of the last term is still owed
        monthly = n * option.usd_per_node_hour * HOURS_PER_MONTH
        charges = (monthly * active + option.upfront_usd_per_node * n * starts * active
                   + monthly * owed_after * last_month(horizon, months))
    else:
        if option.billing is Billing.used_hours:
            share = profile.busy_fraction * option.hours_multiplier
        else:
            share = profile.day_fraction
        charges = n * option.usd_per_node_hour * HOURS_PER_MONTH * share * profile.node_fraction
        charges = charges * active
    charges = charges * (1.0 + option.managed_overhead_fraction)
    return np.asarray(charges + option.extras_usd_per_month * active if with_extras else charges)


def spot_hours_multiplier(interruptions_per_hour: float, checkpoint_interval_hours: float,
                          restart_hours: float) -> float:
    """Billed hours per useful hour on spot: 1 / (1 − λ(τ/2 + R)).

    Each interruption loses on average half a checkpoint interval τ of work plus the restart
    R (first-order model of Young 1974, "A first order approximation to the optimum checkpoint
    interval", CACM 17(9); Daly 2006, FGCS 22(3)). λ is interruptions per hour of the job.
    Infinite when interruptions come faster than work survives.
    """
    lost = interruptions_per_hour * (checkpoint_interval_hours / 2.0 + restart_hours)
    return float("inf") if lost >= 1.0 else 1.0 / (1.0 - lost)


Option = Owned | Rental


def option_flows(option: Option, nodes: Nodes, gpus_per_node: int,
                 profile: UtilizationProfile, horizon: Horizon) -> FloatArray:
    if isinstance(option, Owned):
        return owned_flows(option, nodes, gpus_per_node, profile, horizon)
    return rental_flows(option, nodes, profile, horizon)
