"""Plotly figures for the pages, built server-side as plain figure JSON and rendered by
static/app.js with the locally served plotly.js.

Figures are written as dicts rather than through `plotly.graph_objects`: the graph-objects
validation cost ~70 ms per figure, most of a keystroke's recompute (see bench/bench_scenarios.py).
"""

import json
from typing import Any

from app.tco.schemas import Sensitivity, TcoResponse

# Okabe–Ito palette: distinguishable with colour-vision deficiency; dashes differ too.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
GRID = "#EBF0F8"  # plotly_white's grid colour
AXIS = {"gridcolor": GRID, "linecolor": GRID, "zerolinecolor": GRID, "automargin": True}


LAYOUT: dict[str, Any] = {"paper_bgcolor": "#fff", "plot_bgcolor": "#fff",
                          "font": {"color": "#2a3f5f"}}


def style(i: int) -> dict[str, Any]:
    """Line style of the i-th option shown: colour and dash both differ, so it reads in grey."""
    return {"color": COLOURS[i % 6], "dash": DASHES[i % 6], "width": 3}


def short(label: str, width: int = 30) -> str:
    """A direct label that fits the right margin: long names wrap onto two lines."""
    if len(label) <= width:
        return label
    cut = label.rfind(" ", 0, width)
    cut = cut if cut > 0 else width
    return label[:cut] + "<br>" + label[cut:].strip()


def cumulative_cost_figure(result: TcoResponse, shown: list[str]) -> str:
    """Cumulative cost by month. Options in `shown` (the top few) are drawn and labelled at
    their line ends; the others are in the legend, off until clicked."""
    months = list(range(1, result.request.months + 1))
    order = shown + [o.key for o in sorted(result.options, key=lambda o: o.total_usd)
                     if o.key not in shown]
    by_key = {o.key: o for o in result.options}
    traces = []
    for i, key in enumerate(order):
        opt = by_key[key]
        traces.append({
            "type": "scatter", "mode": "lines", "x": months, "y": opt.cumulative_usd,
            "name": opt.label if len(opt.label) <= 36 else opt.label[:35] + "…",
            "line": style(i), "visible": True if key in shown else "legendonly",
            "hovertemplate": opt.label
            + "<br>month %{x}: $%{y:,.0f}<extra></extra>",
        })
    drawn = [by_key[k] for k in shown]
    ends = [o.cumulative_usd[-1] for o in drawn]
    top = max((max(o.cumulative_usd) for o in drawn), default=1.0)
    texts = [short(f"{o.label}: ${o.total_usd / 1e6:,.2f}M") for o in drawn]
    gap = 0.17 if any("<br>" in t for t in texts) else 0.09  # two-line labels need more room
    labels = [{
        "x": months[-1], "y": y, "text": text,
        "xanchor": "left", "xshift": 6, "showarrow": False, "align": "left",
        "font": {"color": COLOURS[i % 6]},
    } for i, (text, y) in enumerate(zip(texts, spread(ends, gap * top), strict=True))]
    layout: dict[str, Any] = {
        **LAYOUT, "height": 350 + 22 * ((len(traces) + 2) // 3),
        "margin": {"l": 70, "r": 250, "t": 20, "b": 40},
        "xaxis": {**AXIS, "title": {"text": "Month"}, "range": [1, max(months[-1], 2)]},
        "yaxis": {**AXIS, "title": {"text": "Cumulative cost (USD)"}, "tickprefix": "$",
                  "tickformat": ",.3~s", "rangemode": "tozero"},
        "hovermode": "x unified",
        # Three fixed columns: the legend keeps its height at any width (print, narrow screens).
        "legend": {"orientation": "h", "y": -0.22, "yanchor": "top", "font": {"size": 11},
                   "entrywidth": 0.33, "entrywidthmode": "fraction",
                   "title": {"text": "Click a name to show or hide it:", "side": "top"}},
        "annotations": labels,
    }
    return json.dumps({"data": traces, "layout": layout})


def utilization_figure(curves: list[tuple[int, str, list[float]]], utilizations: list[float],
                       crossings: list[tuple[float, float, str]], months: int,
                       current: float | None) -> str:
    """Present value of each option's cost against constant utilization, with the break-even
    points (where two curves cross) marked and labelled, and the scenario's utilization.
    Each curve is (style index, label, values): the same option keeps its style in every chart."""
    xs = [u * 100 for u in utilizations]
    traces: list[dict[str, Any]] = [{
        "type": "scatter", "mode": "lines", "x": xs, "y": ys, "name": label, "line": style(i),
        "hovertemplate": "%{fullData.name}<br>%{x:.0f}% utilization: $%{y:,.0f}<extra></extra>",
    } for i, label, ys in curves]
    if crossings:
        traces.append({
            "type": "scatter", "mode": "markers", "name": "Break-even",
            "x": [u * 100 for u, _, _ in crossings], "y": [y for _, y, _ in crossings],
            "text": [t for _, _, t in crossings], "cliponaxis": False,
            "marker": {"symbol": "diamond", "size": 12, "color": "#000",
                       "line": {"color": "#fff", "width": 1}},
            "hovertemplate": "%{text}<extra></extra>"})
    ends = [ys[-1] for _, _, ys in curves]
    top = max((max(ys) for _, _, ys in curves), default=1.0)
    labels = [{"x": 100, "y": y, "text": short(label), "xanchor": "left", "xshift": 6,
               "align": "left", "showarrow": False, "font": {"color": COLOURS[i % 6]}}
              for (i, label, _), y in zip(curves, spread(ends, 0.09 * top), strict=True)]
    labels += [{"x": u * 100, "y": y, "text": text, "showarrow": True, "arrowhead": 0,
                "ax": 0, "ay": -46 - 22 * (k % 2), "bgcolor": "rgba(255,255,255,0.9)",
                "bordercolor": "#1b2430", "borderwidth": 1, "font": {"size": 11}}
               for k, (u, y, text) in enumerate(crossings)]
    shapes = [] if current is None else [{
        "type": "line", "x0": current * 100, "x1": current * 100, "yref": "paper", "y0": 0,
        "y1": 1, "line": {"color": "#5b6675", "dash": "dot", "width": 1}}]
    if current is not None:
        labels.append({"x": current * 100, "y": 1, "yref": "paper", "text": "this scenario",
                       "showarrow": False, "yanchor": "bottom", "font": {"size": 11}})
    layout: dict[str, Any] = {
        **LAYOUT, "height": 420, "margin": {"l": 70, "r": 250, "t": 30, "b": 50},
        "xaxis": {**AXIS, "title": {"text": "Utilization (% of GPU-hours used, constant)"},
                  "range": [0, 100], "ticksuffix": "%"},
        "yaxis": {**AXIS, "title": {"text": f"Present value of {months}-month cost (USD)"},
                  "tickprefix": "$", "tickformat": ",.3~s", "rangemode": "tozero"},
        "showlegend": False, "hovermode": "closest", "annotations": labels, "shapes": shapes,
    }
    return json.dumps({"data": traces, "layout": layout})


def tornado_figure(sensitivity: Sensitivity, buy: str, rent: str, rows: int = 8) -> str:
    """Sensitivity tornado: for each input, the NPV difference (buy − rent) at its low and high
    value as a bar from the base; widest swing on top. Low and high are told apart by pattern
    and by text, not colour alone."""
    entries = sorted(sensitivity.rows, key=lambda r: r.swing_usd)[-rows:]
    base = sensitivity.base_difference_usd
    names = [r.input.replace("_", " ").replace("usd", "USD").replace(".", ": ")
             for r in entries]
    values = [v for r in entries for v in (r.difference_at_low_usd, r.difference_at_high_usd)]
    pad = 0.18 * max(max(values, default=base) - min(values, default=base), 1.0)

    def bar(name: str, values: list[float], colour: str, pattern: str) -> dict[str, Any]:
        return {"type": "bar", "orientation": "h", "name": name, "y": names,
                "x": [v - base for v in values], "base": base,
                "marker": {"color": colour, "pattern": {"shape": pattern}},
                "text": [("−" if v < 0 else "") + f"${abs(v) / 1e6:,.2f}M" for v in values],
                "textposition": "outside",
                "cliponaxis": False,
                "hovertemplate": "%{y}: $%{customdata:,.0f}<extra>" + name + "</extra>",
                "customdata": values}

    traces = [bar("input at its low value", [r.difference_at_low_usd for r in entries],
                  COLOURS[0], ""),
              bar("input at its high value", [r.difference_at_high_usd for r in entries],
                  COLOURS[1], "/")]
    layout: dict[str, Any] = {
        **LAYOUT, "height": 80 + 34 * len(entries), "barmode": "overlay",
        "margin": {"l": 210, "r": 30, "t": 20, "b": 60},
        "xaxis": {**AXIS, "title": {"text": f"NPV of {buy} minus NPV of {rent} (USD; below "
                                            "zero, buying is cheaper)"},
                  "tickprefix": "$", "tickformat": ",.3~s",
                  "range": [min(values, default=base) - pad, max(values, default=base) + pad]},
        "yaxis": {**AXIS, "automargin": True},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "shapes": [{"type": "line", "x0": base, "x1": base, "yref": "paper", "y0": 0, "y1": 1,
                    "line": {"color": "#1b2430", "width": 1}}],
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
