"""Plotly figures for the pages, built server-side as plain figure JSON and rendered by
static/app.js with the locally served plotly.js.

Figures are written as dicts rather than through `plotly.graph_objects`: the graph-objects
validation cost ~70 ms per figure, most of a keystroke's recompute (see bench/bench_scenarios.py).
"""

import json
from typing import Any

from app.tco.schemas import TcoResponse

# Okabe–Ito palette: distinguishable with colour-vision deficiency; dashes differ too.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
GRID = "#EBF0F8"  # plotly_white's grid colour
AXIS = {"gridcolor": GRID, "linecolor": GRID, "zerolinecolor": GRID, "automargin": True}


def cumulative_cost_figure(result: TcoResponse) -> str:
    months = list(range(1, result.request.months + 1))
    traces = [{
        "type": "scatter", "mode": "lines", "x": months, "y": opt.cumulative_usd,
        "name": opt.label,
        "line": {"color": COLOURS[i % 6], "dash": DASHES[i % 6], "width": 3},
        "hovertemplate": "%{fullData.name}<br>month %{x}: $%{y:,.0f}<extra></extra>",
    } for i, opt in enumerate(result.options)]
    # Direct labels at the line ends (name and total), so the chart reads without the legend or
    # colour; nudged apart so close totals stay legible.
    ends = [opt.cumulative_usd[-1] for opt in result.options]
    top = max(max(opt.cumulative_usd) for opt in result.options)
    labels = [{
        "x": months[-1], "y": y, "text": f"{opt.label}: ${opt.total_usd / 1e6:,.2f}M",
        "xanchor": "left", "xshift": 6, "showarrow": False, "font": {"color": COLOURS[i % 6]},
    } for i, (opt, y) in enumerate(zip(result.options, spread(ends, 0.07 * top), strict=True))]
    layout: dict[str, Any] = {
        "height": 390, "margin": {"l": 70, "r": 190, "t": 30, "b": 60},
        "paper_bgcolor": "#fff", "plot_bgcolor": "#fff", "font": {"color": "#2a3f5f"},
        "xaxis": {**AXIS, "title": {"text": "Month"}, "range": [1, max(months[-1], 2)]},
        "yaxis": {**AXIS, "title": {"text": "Cumulative cost (USD)"}, "tickprefix": "$",
                  "tickformat": ",.3~s", "rangemode": "tozero"},
        "hovermode": "x unified", "legend": {"orientation": "h", "y": -0.25},
        "annotations": labels,
    }
    return json.dumps({"data": traces, "layout": layout})


def spread(values: list[float], min_gap: float) -> list[float]:
    """Label positions: each value moved as little as possible so that sorted neighbours are at
    least `min_gap` apart (pushed upwards, then the group re-centred on the originals)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed: list[float] = []
    for i in order:
        placed.append(values[i] if not placed else max(values[i], placed[-1] + min_gap))
    shift = (sum(placed) - sum(values[i] for i in order)) / max(len(placed), 1)
    out = [0.0] * len(values)
    for rank, i in enumerate(order):
        out[i] = placed[rank] - shift
    return out
