"""A saved scenario of any kind on its page (/s/<id>) and the "Save & share" forms of every
page: one mechanism (app/scenarios: save, pinned, inputs_of) with a view and a form parser per
kind. The results partial is the one the kind's own page includes, so a link shows exactly what
the page showed."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.planner.routes import form_input as plan_form_input
from app.planner.routes import form_query as plan_query
from app.planner.routes import results_context as plan_results
from app.planner.schemas import PlanRequest
from app.scenarios import service as scenarios
from app.scenarios.models import Scenario
from app.scenarios.schemas import ScenarioInputs
from app.tco.schemas import ScheduleProfile, TcoRequest
from app.tco.service import compute_tco
from app.throughput.routes import form_query as throughput_query
from app.throughput.routes import kv_context
from app.throughput.routes import request_from_form as throughput_from_form
from app.throughput.routes import results_context as throughput_results
from app.throughput.schemas import ThroughputRequest
from app.throughput.service import compute_throughput
from app.web import workspace_form
from app.web.results import result_context


@dataclass(frozen=True)
class View:
    partial: str  # the results template the kind's page includes
    context: dict[str, Any]
    fork_url: str  # the kind's page with the saved inputs in its form
    summary: str  # one line of the inputs, under the title
    exports: bool  # CSV/XLSX exist for cost comparisons only


def view(session: Session, scenario: Scenario) -> View:
    """Compute the saved scenario with its prices pinned, for its kind's results partial."""
    inputs = scenarios.inputs_of(scenario)
    with scenarios.pinned(scenario):
        if isinstance(inputs, TcoRequest):
            return View("_results.html", result_context(session, compute_tco(session, inputs)),
                        "/?" + workspace_form.query(inputs), tco_summary(inputs), True)
        if isinstance(inputs, ThroughputRequest):
            return View("_throughput_results.html",
                        throughput_results(compute_throughput(inputs)),
                        "/throughput?" + throughput_query(inputs),
                        f"{inputs.model.preset or 'custom model'} · {inputs.nodes} nodes × "
                        f"{inputs.gpus_per_node} {inputs.gpu} · {inputs.scale_out_fabric}", False)
        if isinstance(inputs, PlanRequest):
            query = plan_query(inputs)
            return View("_planner_results.html", plan_results(session, inputs, query),
                        "/planner?" + query, plan_summary(inputs), False)
        return View("_kv_cache_results.html", kv_context(inputs), "/throughput#long-context",
                    f"{inputs.model.preset or 'custom model'} · {inputs.context_tokens:,} "
                    f"tokens · batch {inputs.batch} · {inputs.gpu}", False)


def tco_summary(req: TcoRequest) -> str:
    p = req.profile
    usage = (f"{p.hours_per_day:g} h/day × {p.days_per_week:g} days/week"
             if isinstance(p, ScheduleProfile) else f"{req.utilization:.0%} utilization")
    return (f"{req.nodes * req.assumptions.gpus_per_node} × {req.gpu_model}, {req.months} months"
            f", {usage}")


def plan_summary(req: PlanRequest) -> str:
    return (f"{req.model}: {req.total_tokens / 1e9:,.3g}B tokens within {req.deadline_hours:g} h"
            f"{f', ${req.budget_usd_per_month:,.0f}/month' if req.budget_usd_per_month else ''}")


def _throughput(form: FormData) -> tuple[ScenarioInputs, str]:
    req = throughput_from_form({k: v for k, v in form.items() if isinstance(v, str)})
    return req, (f"{req.model.preset} on {req.nodes * req.gpus_per_node} × {req.gpu}, "
                 f"{req.scale_out_fabric}")


def _plan(form: FormData) -> tuple[ScenarioInputs, str]:
    _, data = plan_form_input(form)
    req = PlanRequest.model_validate(data)
    return req, f"Plan: {plan_summary(req)}"


# kind -> posted form -> (inputs, default name); ValidationError names the fields.
FORM_PARSERS: dict[str, Callable[[FormData], tuple[ScenarioInputs, str]]] = {
    "throughput": _throughput, "plan": _plan,
}


def form_errors(exc: ValidationError) -> dict[str, str]:
    return {".".join(str(p) for p in e["loc"]) or "form": e["msg"] for e in exc.errors()}
