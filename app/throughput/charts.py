"""Plotly figures for the throughput page (JSON, rendered by static/app.js)."""

import plotly.graph_objects as go

from app.throughput.schemas import ThroughputResponse
from app.web.charts import COLOURS, DASHES

LAYOUT = {"template": "plotly_white", "margin": {"l": 70, "r": 30, "t": 30, "b": 50}}
STEP_PARTS = [("compute_s", "Compute"), ("tp_comm_exposed_s", "TP comm (exposed)"),
              ("cp_comm_exposed_s", "CP comm (exposed)"), ("pipeline_bubble_s", "Pipeline bubble"),
              ("pp_comm_s", "PP send/recv"), ("dp_comm_exposed_s", "DP gradient sync (exposed)"),
              ("optimizer_s", "Optimizer step"), ("data_stall_s", "Data-loading stall")]
MEMORY_PARTS = [("weights_bytes", "Weights"), ("grads_bytes", "Gradients"),
                ("optimizer_bytes", "Optimizer states"), ("activations_bytes", "Activations")]


def _stacked(parts: list[tuple[str, str]], values: dict[str, float], scale: float, unit: str,
             axis_title: str, height: int) -> str:
    fig = go.Figure()
    for i, (key, label) in enumerate(parts):
        value = values[key] / scale
        fig.add_trace(go.Bar(
            y=[""], x=[value], name=label, orientation="h",
            marker={"color": COLOURS[i % 6], "pattern": {"shape": ["", "/", ".", "x", "-", "|",
                                                                   "+", "\\"][i % 8]}},
            text=[f"{label}: {value:.3g} {unit}"] if value > 0 else None,
            textposition="inside", hovertemplate=f"{label}: %{{x:.3g}} {unit}<extra></extra>"))
    fig.update_layout(**LAYOUT, barmode="stack", height=height, xaxis_title=axis_title,
                      legend={"orientation": "h", "y": -0.6, "traceorder": "normal"})
    return str(fig.to_json())


def step_figure(r: ThroughputResponse) -> str:
    return _stacked(STEP_PARTS, r.step.model_dump(), 1.0, "s", "Seconds per training step", 230)


def memory_figure(r: ThroughputResponse) -> str:
    fig_json = _stacked(MEMORY_PARTS, r.memory.model_dump(), 1e9, "GB",
                        f"GB per GPU (usable {r.memory.usable_bytes / 1e9:.0f} GB)", 230)
    return fig_json


def scaling_figure(r: ThroughputResponse) -> str:
    fig = go.Figure()
    for i, s in enumerate(r.scaling):
        fig.add_trace(go.Scatter(
            # A size where nothing fits is a gap, not a zero.
            x=s.num_gpus, y=[t * 86400 / 1e9 if t > 0 else None for t in s.tokens_per_s],
            name=s.fabric,
            mode="lines+markers", line={"color": COLOURS[i % 6], "dash": DASHES[i % 6]},
            hovertemplate="%{x} GPUs: %{y:.2f} B tokens/day<extra>" + s.fabric + "</extra>"))
    ticks = sorted({n for s in r.scaling for n in s.num_gpus})
    fig.update_layout(**LAYOUT, height=360, xaxis_title="GPUs (log scale)", xaxis_type="log",
                      xaxis_tickvals=ticks, xaxis_ticktext=[str(t) for t in ticks],
                      yaxis_title="Training throughput (billion tokens/day)",
                      legend={"orientation": "h", "y": -0.25})
    return str(fig.to_json())
