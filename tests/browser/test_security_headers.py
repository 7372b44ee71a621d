"""Content-Security-Policy in a real Chromium: every page renders its charts with scripts
restricted to 'self' (no inline script, no eval) and reports no CSP violation; a scenario
name with <script> is shown as text; cross-site form posts are refused."""

from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Installed by the browser before any page script (not subject to the page's CSP).
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
"""
PAGES_WITH_CHARTS = ["/", "/s/example-seed000-64gpu-8x5", "/throughput", "/planner"]


@pytest.mark.parametrize("path", [*PAGES_WITH_CHARTS, "/prices", "/methodology"])
def test_pages_render_under_the_csp(open_tab: Any, path: str) -> None:
    tab = open_tab()
    tab.page.set_default_timeout(30000)  # the throughput page computes a sweep on load
    tab.context.add_init_script(RECORD_VIOLATIONS)
    response = tab.page.goto(path)
    assert response is not None
    assert response.status == 200
    csp = response.headers["content-security-policy"]
    assert "script-src 'self';" in csp
    assert "unsafe-eval" not in csp
    if path in PAGES_WITH_CHARTS:
        # app.js draws every [data-figure] with plotly: an SVG appears when scripts ran.
        tab.page.wait_for_selector("[data-figure] svg.main-svg", timeout=15000)
    tab.page.wait_for_load_state("networkidle")
    assert tab.page.evaluate("window.__csp") == []
    assert tab.errors == []


def test_script_in_a_scenario_name_is_inert(open_tab: Any, live_server: str) -> None:
    import json
    import urllib.request

    name = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    req = urllib.request.Request(
        f"{live_server}/api/v1/scenarios", method="POST",
        data=json.dumps({"name": name, "inputs": {"nodes": 1}}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        page_path = json.load(r)["links"]["page"]
    tab = open_tab()
    tab.page.goto(page_path)
    assert tab.page.locator("h1").first.inner_text() == name  # shown as text
    assert tab.page.evaluate("window.__pwned === undefined")
