"""Plotly figures for the pages, built server-side and rendered by static/app.js."""

import plotly.graph_objects as go

from app.tco.schemas import TcoResponse

# Okabe–Ito palette: distinguishable with colour-vision deficiency; dashes differ too.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


def cumulative_cost_figure(result: TcoResponse) -> str:
    fig = go.Figure()
    months = list(range(1, result.request.months + 1))
    for i, opt in enumerate(result.options):
        fig.add_trace(go.Scatter(
            x=months, y=opt.cumulative_usd, name=opt.label, mode="lines",
            line={"color": COLOURS[i % 6], "dash": DASHES[i % 6], "width": 3},
            hovertemplate="%{fullData.name}<br>month %{x}: $%{y:,.0f}<extra></extra>",
        ))
        # Direct label at the line end, so the chart reads without the legend or colour.
        fig.add_annotation(x=months[-1], y=opt.cumulative_usd[-1], text=opt.label,
                           xanchor="left", showarrow=False, font={"color": COLOURS[i % 6]})
    fig.update_layout(
        template="plotly_white", height=380, margin={"l": 70, "r": 150, "t": 30, "b": 50},
        xaxis_title="Month", yaxis_title="Cumulative cost (USD)",
        xaxis_range=[1, months[-1]],  # the end-of-line labels sit in the right margin
        yaxis_tickprefix="$", yaxis_tickformat=",.3s", hovermode="x unified",
        legend={"orientation": "h", "y": -0.2},
    )
    return str(fig.to_json())
