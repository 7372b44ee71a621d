"""Planner figures: time-vs-cost scatter of every candidate with the Pareto frontier
highlighted, and one option's step-time and cost breakdown beside another's."""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.planner.schemas import OptionDetail
from app.planner.service import Computed

MAX_POINTS = 3000  # enough to show the cloud of options; the frontier is always drawn whole


def _label(c: Computed, k: int) -> str:
    p = c.plan
    spec = p.clusters.specs[int(p.cluster_idx[k])]
    terms = p.payments[int(p.payment_idx[k])]
    over = "" if spec.oversubscription == 1 else f" {spec.oversubscription:g}:1"
    return f"{spec.num_gpus} {spec.gpu_key} · {spec.scale_out.name}{over} · {terms.label}"


def _unique(labels: list[str]) -> list[str]:
    """Label a run of identical neighbours once (1:1 and 2:1 variants sit on top of each
    other)."""
    return [t if i == 0 or t != labels[i - 1] else "" for i, t in enumerate(labels)]


def log_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Tick values 1-2-5 per decade spanning [low, high], labelled $10K / $2M: plotly's own log
    ticks label every digit when the range is under two decades and crowd the axis."""
    if not (np.isfinite(low) and np.isfinite(high)) or low <= 0 or high <= 0:
        return [], []
    values = [m * 10.0 ** e for e in range(int(np.floor(np.log10(low))),
                                           int(np.ceil(np.log10(high))) + 1) for m in (1, 2, 5)]
    inside = [v for v in values if low / 1.2 <= v <= high * 1.2]
    if len(inside) > 8:  # many decades: the decades alone
        inside = [v for v in inside if f"{v:.0e}".startswith("1")]
    return inside, [_usd_short(v) for v in inside]


def _usd_short(v: float) -> str:
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= div:
            return f"${v / div:g}{unit}"
    return f"${v:g}"


def time_cost_figure(c: Computed) -> str:
    p = c.plan
    ok = np.flatnonzero(np.isfinite(p.cost.total_usd))[:MAX_POINTS]
    feas = ok[p.feasible[ok]]
    rest = ok[~p.feasible[ok]]
    fig = go.Figure()
    for idx, name, colour, symbol in ((rest, "Misses deadline or budget", "#9aa5b1", "x"),
                                      (feas, "Feasible", "#0072B2", "circle")):
        fig.add_trace(go.Scatter(
            x=p.wall_hours[idx], y=p.cost.total_usd[idx], mode="markers", name=name,
            marker={"color": colour, "symbol": symbol, "size": 8, "opacity": 0.7},
            text=[_label(c, int(k)) for k in idx], customdata=idx,
            hovertemplate="%{text}<br>%{x:,.1f} h, $%{y:,.0f}<extra></extra>"))
    front = p.frontier
    fig.add_trace(go.Scatter(
        x=p.wall_hours[front], y=p.cost.total_usd[front], mode="lines+markers+text",
        name="Pareto frontier (fastest for its cost)",
        line={"color": "#D55E00", "width": 2, "shape": "hv"},
        marker={"color": "#D55E00", "size": 11, "symbol": "diamond"},
        text=_unique([f"{p.clusters.specs[int(p.cluster_idx[k])].num_gpus} "
                      f"{p.clusters.specs[int(p.cluster_idx[k])].gpu_key}, "
                      f"{p.payments[int(p.payment_idx[k])].key}" for k in front]),
        textposition="top right", customdata=front,
        hovertext=[_label(c, int(k)) for k in front],
        hovertemplate="%{hovertext}<br>%{x:,.1f} h, $%{y:,.0f}<extra>frontier</extra>"))
    costs = p.cost.total_usd[ok]
    costs = costs[costs > 0]
    tickvals, ticktext = log_ticks(float(costs.min()), float(costs.max())) if costs.size \
        else ([], [])
    deadline = p.workload.deadline_hours
    fig.add_vline(x=deadline, line={"dash": "dash", "color": "#009E73"},
                  annotation_text=f"deadline {deadline:g} h", annotation_position="top left")
    fig.update_layout(
        template="plotly_white", height=420, margin={"l": 80, "r": 30, "t": 30, "b": 60},
        xaxis_title="Time to train (hours, wall clock incl. failures)",
        yaxis_title="Cost per training run (USD, log scale)", yaxis_type="log",
        xaxis_rangemode="tozero",
        legend={"orientation": "h", "y": -0.2})
    if tickvals:
        fig.update_yaxes(tickmode="array", tickvals=tickvals, ticktext=ticktext)
    else:
        fig.update_yaxes(tickprefix="$", tickformat=",.3s")
    return str(fig.to_json())


STEP_PARTS = (("compute_s", "Compute", "#0072B2"),
              ("tp_comm_exposed_s", "Tensor-parallel comm", "#56B4E9"),
              ("cp_comm_exposed_s", "Context-parallel comm", "#CC79A7"),
              ("pipeline_bubble_s", "Pipeline bubble", "#E69F00"),
              ("pp_comm_s", "Pipeline p2p", "#F0E442"),
              ("dp_comm_exposed_s", "Data-parallel comm", "#D55E00"),
              ("optimizer_s", "Optimizer", "#009E73"),
              ("data_stall_s", "Data stall", "#999999"))
COST_PARTS = (("upfront_usd", "Upfront / capex share", "#332288"),
              ("hourly_usd", "Hourly while training", "#44AA99"),
              ("paid_idle_usd", "Paid but idle", "#DDCC77"),
              ("busy_energy_usd", "Energy above idle", "#AA4499"))


def _short(d: OptionDetail) -> str:
    o = d.option
    rank = f"#{o.rank} " if o.rank else ""
    return f"{rank}{o.gpus} {o.gpu}<br>{o.payment_label[:28]}"


def breakdown_figure(details: list[OptionDetail]) -> str:
    """Step time (seconds per step, left) and cost per run (USD, right) of each option,
    stacked by part, side by side: where one option's time or money goes against another's.
    Every option trains the same global batch per step, so step times compare directly."""
    names = [_short(d) for d in details]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.2,
                        subplot_titles=("Step time (s per step)", "Cost per run (USD)"))
    for key, label, colour in STEP_PARTS:
        vals = [d.step_seconds.get(key, 0.0) for d in details]
        if any(v > 0 for v in vals):
            fig.add_trace(go.Bar(x=names, y=vals, name=label, marker_color=colour,
                                 legendgroup="step", hovertemplate="%{y:.3f} s"), 1, 1)
    for key, label, colour in COST_PARTS:
        vals = [max(d.cost_usd.get(key, 0.0), 0.0) for d in details]
        if any(v > 0.5 for v in vals):
            fig.add_trace(go.Bar(x=names, y=vals, name=label, marker_color=colour,
                                 legendgroup="cost", hovertemplate="$%{y:,.0f}"), 1, 2)
    fig.update_layout(template="plotly_white", barmode="stack", height=340,
                      margin={"l": 60, "r": 20, "t": 40, "b": 40},
                      legend={"orientation": "h", "y": -0.35, "font": {"size": 11}})
    fig.update_yaxes(title_text="seconds per step", row=1, col=1)
    fig.update_yaxes(title_text="USD per run", tickprefix="$", tickformat=",.3s", row=1, col=2)
    return str(fig.to_json())
