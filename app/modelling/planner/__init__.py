"""Planner: cost per trained token and the cheapest cluster that meets a deadline.

Joins the throughput model (how long a run takes on a cluster) with ways of paying for that
cluster (what the run costs). Pure: stdlib + numpy, frozen dataclasses in and out.
"""

from app.modelling.planner.clusters import ClusterArrays, ClusterSpec, evaluate_clusters
from app.modelling.planner.explain import (
    BreakEvenPrice,
    BreakEvenUtilization,
    Infeasibility,
    break_even_price,
    break_even_utilization,
    explain_infeasible,
)
from app.modelling.planner.network import FabricValue, fabric_value
from app.modelling.planner.payment import (
    CostParts,
    PaymentArrays,
    PaymentTerms,
    run_cost,
    run_cost_scalar,
)
from app.modelling.planner.search import Plan, Workload, pareto_front, plan

__all__ = [
    "BreakEvenPrice",
    "BreakEvenUtilization",
    "ClusterArrays",
    "ClusterSpec",
    "CostParts",
    "FabricValue",
    "Infeasibility",
    "PaymentArrays",
    "PaymentTerms",
    "Plan",
    "Workload",
    "break_even_price",
    "break_even_utilization",
    "evaluate_clusters",
    "explain_infeasible",
    "fabric_value",
    "pareto_front",
    "plan",
    "run_cost",
    "run_cost_scalar",
]
