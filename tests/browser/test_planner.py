"""The planner in a real browser: the seed case answers on load, and an option's details open
its step-time and cost breakdown (table and chart) without a page load or console error."""

from typing import Any

import pytest

pytestmark = pytest.mark.browser


def test_planner_option_details_show_the_breakdown(open_tab: Any) -> None:
    tab = open_tab()
    page = tab.page
    page.set_default_timeout(60_000)  # the seed case searches thousands of configurations
    page.goto("/planner")
    page.locator("#plan-chart .main-svg").first.wait_for()  # Plotly drew the frontier
    page.locator("#why-chart .main-svg").first.wait_for()  # and the winner vs runner-up
    url = page.url
    rows = page.locator("table.ranked tbody tr")
    assert rows.count() >= 2
    second = rows.nth(1)
    option_id = second.get_attribute("data-option")
    second.get_by_role("link", name="details").click()
    detail = page.locator(f'#option-detail [data-detail="{option_id}"]')
    detail.wait_for()
    assert "beside the winner" in detail.inner_text()
    assert "Step time" in detail.inner_text()
    page.locator("#option-breakdown-chart .main-svg").first.wait_for()
    bars = page.locator("#option-breakdown-chart .barlayer .point")
    assert bars.count() >= 4  # at least two parts for each of the two options
    assert page.url == url  # htmx swapped the fragment in; no navigation
    tab.screenshot("planner-option-detail")
