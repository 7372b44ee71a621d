"""The product in a real browser: answer on load, live recompute, share link, export."""

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

pytestmark = pytest.mark.browser


TOTALS = "table.comparison tbody td[data-total]"


def totals(page: Any) -> list[float]:
    """Every option's total, in table order (the order of the exports)."""
    return [float(t) for t in page.locator(TOTALS).evaluate_all(
        "els => els.map(e => e.dataset.total)")]


def by_option(page: Any) -> dict[str, float]:
    """Table totals keyed by option key (data-option)."""
    return {str(k): float(v) for k, v in page.locator("table.comparison tbody tr").evaluate_all(
        "els => els.map(e => [e.dataset.option, e.querySelector('td[data-total]').dataset.total])")}


def table_text(page: Any) -> str:
    return str(page.locator("table.comparison").inner_text())


def wait_recomputed(page: Any, before: list[float]) -> list[float]:
    page.wait_for_function(
        "b => JSON.stringify([...document.querySelectorAll("
        "'table.comparison tbody td[data-total]')]"
        ".map(e => parseFloat(e.dataset.total))) !== JSON.stringify(b)", arg=before)
    return totals(page)


def test_home_shows_an_answer_and_follows_utilization(open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    page.goto("/")
    assert len(totals(page)) >= 3  # the first screen already answers
    page.locator("#cumulative-cost .main-svg").first.wait_for()  # Plotly drew the chart
    full = totals(page)
    full_by = by_option(page)
    page.fill("#f-utilization", "0.3")
    partial = wait_recomputed(page, full)
    page.wait_for_url(re.compile(r"utilization=0\.3"))  # the URL follows the inputs
    partial_by = by_option(page)
    assert partial_by["aws_on_demand"] < full_by["aws_on_demand"]  # billed per used hour
    reserved = "aws_reserved_1y_partial_upfront"  # billed every hour of its term
    assert partial_by[reserved] == full_by[reserved]
    tab.screenshot("workspace")
    page.reload()  # a reload keeps the inputs and the answer
    assert page.input_value("#f-utilization") == "0.3"
    assert totals(page) == partial
    page.go_back()  # back returns to the previous state
    page.wait_for_url(lambda url: "utilization=0.3" not in url)
    assert totals(page) == full


def test_keyboard_edit_recomputes_and_bad_input_shows_inline_error(open_tab: Any) -> None:
    page = open_tab().page
    page.goto("/")
    before = totals(page)
    page.focus("#f-utilization")
    page.keyboard.press("ArrowDown")  # 1.00 → 0.99 by keyboard alone
    wait_recomputed(page, before)
    page.fill("#f-nodes", "0")
    error = page.locator("#err-nodes")
    error.wait_for(state="visible")
    assert "greater than or equal to 1" in error.inner_text()


def test_save_and_share_shows_identical_numbers_in_a_fresh_browser(open_tab: Any) -> None:
    page = open_tab().page
    page.goto("/?nodes=8&months=24&utilization=0.5")
    mine, my_table = totals(page), table_text(page)
    page.fill("#f-name", "Board deck <script>alert(1)</script>")
    page.click("button:has-text('Save & share')")
    page.wait_for_url(re.compile(r"/s/"))
    assert re.search(r"/s/[A-Za-z0-9_-]{22}$", page.url)
    link = page.url
    assert totals(page) == mine

    fresh = open_tab()  # a new context: nothing shared with the author's browser
    fresh.page.goto(link)
    assert totals(fresh.page) == mine
    assert table_text(fresh.page) == my_table
    assert fresh.page.locator("h1").inner_text() == "Board deck <script>alert(1)</script>"
    fresh.page.locator("#cumulative-cost .main-svg").first.wait_for()
    fresh.screenshot("shared-scenario")
    with fresh.page.expect_download() as info:  # the XLSX a finance lead pastes into a deck
        fresh.page.click("text=Download XLSX")
    assert info.value.suggested_filename.endswith(".xlsx")
    xlsx = io.BytesIO(Path(info.value.path()).read_bytes())  # the temp file has no extension
    sheet = load_workbook(xlsx)["Comparison"]
    exported = [round(float(row[1]), 2) for row in sheet.iter_rows(min_row=5, values_only=True)]
    assert exported == mine
    fresh.page.emulate_media(media="print")
    fresh.screenshot("shared-scenario-print")
    fresh.page.emulate_media(media="screen")

    fresh.page.click("text=Fork to edit")  # fork → the workspace with the inputs prefilled
    fresh.page.wait_for_url(re.compile(r"/\?"))
    assert fresh.page.input_value("#f-utilization") == "0.5"
    assert totals(fresh.page) == mine


def test_export_csv_download_matches_the_page(open_tab: Any) -> None:
    page = open_tab().page
    page.goto("/?nodes=8&months=24&utilization=1&as_of=2026-11-30")
    with page.expect_download() as info:
        page.click("text=Download CSV")
    download = info.value
    assert download.suggested_filename.endswith(".csv")
    with open(download.path(), encoding="utf-8") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    assert rows[0] == ["# Comparison"]
    comparison = rows[2:rows.index([]) if [] in rows else None]
    exported = [round(float(r[1]), 2) for r in comparison if r and not r[0].startswith("#")]
    assert sorted(exported) == sorted(totals(page))
    assert 2_733_120 in exported  # 8 nodes × $19.50 × 17,520 h reserved


def test_comparison_table_sorts_by_a_column(open_tab: Any) -> None:
    page = open_tab().page
    page.goto("/?utilization=0.3")
    header = page.locator("table.comparison thead th").nth(1)
    header.locator("button").click()
    values = [float(v) for v in page.locator("table.comparison tbody td:nth-child(2)")
              .evaluate_all("els => els.map(e => e.dataset.sort)")]
    assert values == sorted(values)
    assert header.get_attribute("aria-sort") == "ascending"
    header.locator("button").press("Enter")  # keyboard works too
    values = [float(v) for v in page.locator("table.comparison tbody td:nth-child(2)")
              .evaluate_all("els => els.map(e => e.dataset.sort)")]
    assert values == sorted(values, reverse=True)


def test_every_page_loads_without_console_errors(open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    for path in ("/", "/methodology", "/s/example-seed000-64gpu-8x5"):
        response = page.goto(path)
        assert response is not None
        assert response.status == 200
    page.goto("/methodology#gpu-hour-used")
    assert page.locator("#gpu-hour-used").is_visible()
    tab.screenshot("methodology")
    assert tab.errors == []


def test_without_javascript_forms_still_work(open_tab: Any) -> None:
    page = open_tab(javascript=False).page
    page.goto("/")
    default = totals(page)
    assert len(default) >= 3
    page.fill("#f-utilization", "0.3")
    page.click("button:has-text('Recompute')")  # a plain GET form re-rendered by the server
    page.wait_for_url(re.compile(r"utilization=0\.3"))
    assert totals(page) != default
    recomputed = totals(page)
    page.fill("#f-name", "no-js")
    page.click("button:has-text('Save & share')")  # a plain POST, then a 303 to the link
    page.wait_for_url(re.compile(r"/s/"))
    assert totals(page) == recomputed


def test_throughput_save_and_share_keeps_the_numbers(open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    page.goto("/throughput?nodes=4&scale_out_fabric=RoCEv2+untuned")
    tokens = page.locator("[data-tokens-per-day]").get_attribute("data-tokens-per-day")
    page.locator("#scaling-chart .main-svg").first.wait_for()
    tab.screenshot("throughput")
    page.fill("#f-name", "RoCE check")
    page.click("button:has-text('Save & share')")
    page.wait_for_url(re.compile(r"/s/[A-Za-z0-9_-]{22}$"))
    assert page.locator("[data-tokens-per-day]").get_attribute("data-tokens-per-day") == tokens
    assert page.locator("h1").inner_text() == "RoCE check"
    tab.screenshot("shared-throughput")
    assert tab.errors == []


def test_every_page_screenshot_at_laptop_size(open_tab: Any) -> None:
    """Screenshots for review (test-output/screenshots): every page, no console errors."""
    tab = open_tab()
    for name, path in (("planner", "/planner"), ("prices", "/prices"),
                       ("example-plan", "/s/example-seed001-256gpu-48h-plan"),
                       ("example-kv", "/s/example-seed000-1m-context-kv"),
                       ("workspace-schedule", "/?usage=schedule&hours_per_day=8&days_per_week=5")):
        response = tab.page.goto(path)
        assert response is not None
        assert response.status == 200, path
        tab.page.wait_for_load_state("networkidle")
        tab.screenshot(name)
    assert tab.errors == []
