"""Browser-test fixtures: the real app under uvicorn on a free local port over a fresh SQLite
database, driven by Debian's Chromium through Playwright (no browser download).

Without Chromium (or Playwright) the tests are skipped with the reason, except in CI
(`CI=true`), where a missing browser fails the run."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
LAPTOP = {"width": 1366, "height": 768}
IN_CI = os.environ.get("CI") == "true"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true and the browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def playwright_api() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (make install)")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_api: Any) -> Iterator[Any]:
    b = playwright_api.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield b
    b.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real app (migrations, price snapshot and examples run at start-up)."""
    db_path = tmp_path_factory.mktemp("browser") / "browser.db"
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db_path}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the app did not start on {base}", pytrace=False)
        time.sleep(0.1)
    yield base
    proc.terminate()
    proc.wait(timeout=10)


class Tab:
    """A page in a fresh browser context that records console errors and failed requests."""

    def __init__(self, browser: Any, base_url: str, javascript: bool = True) -> None:
        self.context = browser.new_context(viewport=LAPTOP, base_url=base_url,
                                           accept_downloads=True, java_script_enabled=javascript)
        self.page = self.context.new_page()
        self.page.set_default_timeout(8000)
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def _response(self, response: Any) -> None:
        if response.status >= 500:
            self.errors.append(f"{response.status} {response.url}")

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def open_tab(browser: Any, live_server: str) -> Iterator[Any]:
    """Factory of fresh tabs (new contexts: no shared cookies or storage); each must end with no
    console errors."""
    tabs: list[Tab] = []

    def make(javascript: bool = True) -> Tab:
        tabs.append(Tab(browser, live_server, javascript))
        return tabs[-1]

    yield make
    for tab in tabs:
        tab.context.close()
    assert [e for tab in tabs for e in tab.errors] == []


_skip_reasons: set[str] = set()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and "browser" in report.keywords and isinstance(report.longrepr, tuple):
        _skip_reasons.add(str(report.longrepr[2]).removeprefix("Skipped: "))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say loudly when the browser tests did not run (skips are otherwise easy to miss)."""
    for reason in sorted(_skip_reasons):
        terminalreporter.write_line(f"BROWSER TESTS SKIPPED — {reason}", yellow=True, bold=True)
