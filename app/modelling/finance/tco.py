"""Monthly cash flows for owning a GPU cluster versus renting it from AWS.

Conventions (all arrays are numpy float64, US dollars, cash out positive):
- a month is 730 hours (8,760 h / 12), so 24 months are exactly 17,520 h;
- month 0 is the first month of the horizon; capex is paid in month 0;
- utilization is the fraction of wall-clock hours the cluster does useful work, in [0, 1].

Billing rules (AWS EC2 pricing pages, "Reserved Instances payment options" whitepaper):
- on-demand is billed per instance-hour actually run, so it scales with utilization;
- a reserved instance is billed for every hour of its term, used or not; its upfront fee is paid
  at the start of each term; a horizon that ends mid-term still owes the rest of the term, which
  is booked in the last month so totals show the real commitment.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ClusterShape:
    nodes: int
    gpus_per_node: int = 8

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node


@dataclass(frozen=True)
class OwnedCosts:
    """Buying the cluster and running it in an owned facility."""

    gpu_usd_each: float
    server_usd_per_node: float  # chassis, CPUs, RAM, local NVMe: everything but the GPUs
    network_usd_per_node: float  # switches, NICs, cables and transceivers, per node served
    power_busy_kw_per_node: float  # IT power at full load
    power_idle_kw_per_node: float
    electricity_usd_per_kwh: float
    pue: float  # facility power / IT power (The Green Grid, PUE: a comprehensive examination)
    staff_usd_per_year: float


@dataclass(frozen=True)
class CloudRates:
    """AWS rates per instance (one instance = one node)."""

    on_demand_usd_per_hour: float
    reserved_usd_per_hour: float  # recurring hourly part of the reservation
    reserved_upfront_usd: float = 0.0  # per instance, per term
    reserved_term_months: int = 12


@dataclass(frozen=True)
class OptionFlows:
    key: str
    label: str
    monthly_usd: FloatArray  # shape (months,)

    @property
    def cumulative_usd(self) -> FloatArray:
        return np.cumsum(self.monthly_usd)

    @property
    def total_usd(self) -> float:
        return float(self.monthly_usd.sum())


def owned_monthly_usd(
    cluster: ClusterShape, costs: OwnedCosts, months: int, utilization: float
) -> FloatArray:
    """Capex in month 0, then power and staff every month.

    Power: energy_kWh = nodes × (idle + u × (busy − idle)) kW × PUE × hours; a node draws idle
    power when not training, so power follows utilization but never drops to zero.
    """
    capex = cluster.nodes * (
        cluster.gpus_per_node * costs.gpu_usd_each
        + costs.server_usd_per_node
        + costs.network_usd_per_node
    )
    it_kw = cluster.nodes * (
        costs.power_idle_kw_per_node
        + utilization * (costs.power_busy_kw_per_node - costs.power_idle_kw_per_node)
    )
    power = it_kw * costs.pue * HOURS_PER_MONTH * costs.electricity_usd_per_kwh
    flows = np.full(months, power + costs.staff_usd_per_year / 12.0)
    flows[0] += capex
    return flows


def on_demand_monthly_usd(
    cluster: ClusterShape, rates: CloudRates, months: int, utilization: float
) -> FloatArray:
    """Billed only for the hours used: nodes × rate × u × 730 h each month."""
    hourly = cluster.nodes * rates.on_demand_usd_per_hour
    return np.full(months, hourly * utilization * HOURS_PER_MONTH)


def reserved_monthly_usd(cluster: ClusterShape, rates: CloudRates, months: int) -> FloatArray:
    """Every hour of every term is billed whatever the utilization; upfront at each term start."""
    term = rates.reserved_term_months
    terms = -(-months // term)  # whole terms needed to cover the horizon
    committed = np.full(terms * term, cluster.nodes * rates.reserved_usd_per_hour * HOURS_PER_MONTH)
    committed[::term] += cluster.nodes * rates.reserved_upfront_usd
    flows = committed[:months].copy()
    flows[-1] += committed[months:].sum()  # the rest of the last term is still owed
    return flows


def compare(
    cluster: ClusterShape,
    owned: OwnedCosts,
    cloud: CloudRates,
    months: int,
    utilization: float,
) -> tuple[OptionFlows, ...]:
    """Buy vs AWS on-demand vs AWS reserved over `months` at `utilization`."""
    return (
        OptionFlows("buy", "Buy (owned facility)",
                    owned_monthly_usd(cluster, owned, months, utilization)),
        OptionFlows("aws_on_demand", "AWS on-demand",
                    on_demand_monthly_usd(cluster, cloud, months, utilization)),
        OptionFlows("aws_reserved", f"AWS reserved {cloud.reserved_term_months // 12}y",
                    reserved_monthly_usd(cluster, cloud, months)),
    )
