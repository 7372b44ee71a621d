"""What the results block shows for one TcoResponse, chosen for a budget owner: the best option
of each family for the cards, the few options worth drawing, the cost-vs-utilization curves
with the points where the cheapest option changes, and the figures as JSON for Plotly.

Read-only over the TCO engine: the curves come from `compute_sweep` (the machinery behind
POST /api/v1/tco/sweep) at the scenario's own horizon.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.tco.schemas import OptionResult, TcoResponse, TcoSweepRequest
from app.tco.service import compute_sweep
from app.web.charts import cumulative_cost_figure, tornado_figure, utilization_figure

FAMILIES = (("own", "Own the cluster"), ("cloud", "AWS"), ("gpu_cloud", "Other GPU clouds"),
            ("mixed", "Mixed: own a baseline, rent the peaks"))
SHOWN = 5
UTILIZATION_GRID = [i / 20 for i in range(21)]  # 0%, 5%, … 100%


@dataclass(frozen=True)
class FamilyBest:
    family: str
    title: str
    option: OptionResult
    count: int  # options of this family compared


def family_bests(result: TcoResponse) -> list[FamilyBest]:
    out = []
    for family, title in FAMILIES:
        members = [o for o in result.options if o.family == family]
        if members:
            out.append(FamilyBest(family, title, min(members, key=lambda o: o.total_usd),
                                  len(members)))
    return out


def shown_keys(result: TcoResponse, n: int = SHOWN) -> list[str]:
    """The cheapest option, then each family's best, then the next cheapest, up to `n`."""
    ranked = sorted(result.options, key=lambda o: o.total_usd)
    candidates = [ranked[0]] + [b.option for b in sorted(
        family_bests(result), key=lambda b: b.option.total_usd)] + ranked
    keys: list[str] = []
    for o in candidates:
        # An option that repeats a drawn one to the dollar (a mixed strategy whose best
        # baseline is the whole cluster) would only hide that line.
        if o.key not in keys and all(abs(o.total_usd - by_key.total_usd) >= 1.0
                                     for by_key in result.options if by_key.key in keys):
            keys.append(o.key)
    return keys[:n]


def runner_up(result: TcoResponse) -> FamilyBest | None:
    """The best option of another kind than the cheapest that costs more than it (the
    alternative a budget owner weighs), or None."""
    cheapest = min(result.options, key=lambda o: o.total_usd)
    others = [b for b in family_bests(result)
              if b.family != cheapest.family and b.option.total_usd >= cheapest.total_usd + 1.0]
    return min(others, key=lambda b: b.option.total_usd, default=None)


def _crossing(u0: float, u1: float, d0: float, d1: float) -> float:
    """Where a difference linear between (u0, d0) and (u1, d1) is zero. Each option's present
    value is linear in constant utilization (billed hours and energy scale with it), so this
    is exact, not an approximation."""
    return u0 + (u1 - u0) * d0 / (d0 - d1)


def flips(labels: list[str], curves: list[list[float]],
          us: list[float]) -> list[tuple[float, float, str]]:
    """The utilizations where the cheapest of `curves` changes: (utilization, PV, label)."""
    out = []
    cheapest = [min(range(len(curves)), key=lambda k: curves[k][j]) for j in range(len(us))]
    for j in range(1, len(us)):
        a, b = cheapest[j - 1], cheapest[j]
        if a == b:
            continue
        d0 = curves[a][j - 1] - curves[b][j - 1]
        d1 = curves[a][j] - curves[b][j]
        u = _crossing(us[j - 1], us[j], d0, d1) if d0 != d1 else us[j]
        y = curves[a][j - 1] + (curves[a][j] - curves[a][j - 1]) * (u - us[j - 1]) / (
            us[j] - us[j - 1])
        out.append((u, y, f"{u:.0%}: {labels[b]} cheaper above"))
    return out


def utilization_chart(session: Session, result: TcoResponse, keys: list[str]) -> str | None:
    """Cost of the shown (non-mixed) options across utilization 0–100%, with the flips."""
    req = result.request.model_copy(update={"as_of": result.as_of})
    sweep = compute_sweep(session, TcoSweepRequest(tco=req, utilizations=UTILIZATION_GRID,
                                                   horizons_months=[req.months]))
    index = {k: i for i, k in enumerate(sweep.options)}
    picked = [k for k in keys if k in index]
    if len(picked) < 2:
        return None
    labels = [sweep.labels[index[k]] for k in picked]
    curves = [[row[0] for row in sweep.npv_usd[index[k]]] for k in picked]
    styled = [(keys.index(k), label, ys) for k, label, ys in zip(picked, labels, curves,
                                                                 strict=True)]
    return utilization_figure(styled, UTILIZATION_GRID, flips(labels, curves, UTILIZATION_GRID),
                              req.months, result.mean_utilization)


def label_of(result: TcoResponse, key: str) -> str:
    return next((o.label for o in result.options if o.key == key), key)


def result_context(session: Session, result: TcoResponse) -> dict[str, Any]:
    """Template context for _results.html."""
    keys = shown_keys(result)
    return {
        "result": result, "families": family_bests(result), "shown": keys,
        "runner": runner_up(result),
        "chart_json": cumulative_cost_figure(result, keys),
        "utilization_json": utilization_chart(session, result, keys),
        "tornado_json": tornado_figure(result.sensitivity,
                                       label_of(result, result.sensitivity.buy),
                                       label_of(result, result.sensitivity.rent))
        if result.sensitivity else None,
        "label_of": lambda key: label_of(result, key),
    }
