"""Chart helpers."""

import html
import json
import re

import pytest
from fastapi.testclient import TestClient

from app.web.charts import spread


def test_spread_keeps_far_labels_and_separates_close_ones() -> None:
    assert spread([1.0, 5.0, 9.0], 0.5) == [1.0, 5.0, 9.0]
    # 2.5 and 2.73 are 0.23 apart; a gap of 0.3 pushes 2.73 up by 0.07, then all three move down
    # by 0.07 / 3 to stay centred on the original values.
    assert spread([2.5, 2.73, 3.8], 0.3) == pytest.approx([2.5 - 0.07 / 3, 2.8 - 0.07 / 3,
                                                          3.8 - 0.07 / 3])
    assert spread([1.0, 1.0], 0.2) == pytest.approx([0.9, 1.1])


def test_cumulative_figure_has_units_and_one_trace_per_option(client: TestClient) -> None:
    r = client.get("/", params={"nodes": 8, "months": 24, "as_of": "2026-11-30"},
                   headers={"HX-Request": "true"})
    raw = re.search(r'data-figure="([^"]+)"', r.text)
    assert raw is not None
    fig = json.loads(html.unescape(raw.group(1)))
    api = client.post("/api/v1/tco", json={"nodes": 8, "months": 24, "as_of": "2026-11-30"})
    options = api.json()["options"]
    # Legend names are cut at 36 characters; the hover text keeps the whole label.
    assert sorted(t["hovertemplate"].split("<br>")[0] for t in fig["data"]) == \
        sorted(o["label"] for o in options)
    assert all(len(t["name"]) <= 36 for t in fig["data"])
    # The top five are drawn and labelled, the cheapest first; the rest wait in the legend.
    drawn = [t["hovertemplate"].split("<br>")[0] for t in fig["data"] if t["visible"] is True]
    assert len(drawn) == 5
    assert drawn[0] == min(options, key=lambda o: o["total_usd"])["label"]
    assert len(fig["layout"]["annotations"]) == 5
    assert fig["layout"]["yaxis"]["title"]["text"] == "Cumulative cost (USD)"
    assert fig["layout"]["xaxis"]["title"]["text"] == "Month"
    (reserved,) = [t["y"] for t in fig["data"]
                   if t["hovertemplate"].startswith("AWS reserved 1y partial upfront<br>")]
    assert len(reserved) == 24
    assert reserved[-1] == pytest.approx(8 * 19.50 * 17_520)  # cumulative ends at the total


def test_planner_log_axis_has_few_labelled_ticks() -> None:
    from app.planner.charts import log_ticks
    # $6K–$100K spans 1.2 decades: 1-2-5 steps give $10K, $20K, $50K, $100K (and $5K, within
    # 20% of the lowest cost), not a label at every digit.
    assert log_ticks(6_000, 100_000) == ([5e3, 1e4, 2e4, 5e4, 1e5],
                                         ["$5K", "$10K", "$20K", "$50K", "$100K"])
    values, labels = log_ticks(5e3, 5e8)  # many decades: the decades alone
    assert labels == ["$10K", "$100K", "$1M", "$10M", "$100M"]
    assert len(values) == 5
