"""Cross-cutting API machinery: problem+json errors, body size limit, CSRF guard, security
headers, rate limiting, and bounds on every request field of the OpenAPI schema."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.ratelimit import service as ratelimit
from app.settings import Settings, get_settings

PROBLEM = "application/problem+json"


def _is_problem(r: Any, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == PROBLEM
    body: dict[str, Any] = r.json()
    assert body["status"] == status
    assert body["title"]
    assert body["detail"]
    assert "Traceback" not in r.text
    return body


def test_api_errors_are_problem_json(client: TestClient) -> None:
    _is_problem(client.get("/api/v1/nope"), 404)
    _is_problem(client.get("/api/v1/prices/999999/history"), 404)
    r = client.put("/api/v1/tco", json={})
    _is_problem(r, 405)
    assert "POST" in r.headers["allow"]
    body = _is_problem(client.post("/api/v1/tco", json={"nodes": -1}), 422)
    assert body["errors"][0]["field"] == "nodes"
    # Even a browser-like Accept header gets problem+json under /api/.
    _is_problem(client.get("/api/v1/nope", headers={"Accept": "text/html"}), 404)


def test_pages_keep_html_errors(client: TestClient) -> None:
    r = client.get("/no-such-page", headers={"Accept": "text/html"})
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "<html" in r.text.lower()


def test_body_size_limit_by_header_and_by_stream(client: TestClient) -> None:
    limit = get_settings().max_body_bytes
    big = b'{"nodes": 1, "x": "' + b"a" * limit + b'"}'
    _is_problem(client.post("/api/v1/tco", content=big,
                            headers={"content-type": "application/json"}), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer
        for _ in range(limit // 1024 + 2):
            yield b" " * 1024

    _is_problem(client.post("/api/v1/tco", content=chunks(),
                            headers={"content-type": "application/json"}), 413)


def test_security_headers_on_pages_api_and_static(client: TestClient) -> None:
    for path in ("/", "/api/v1/prices", "/static/app.css", "/api/v1/nope"):
        h = client.get(path).headers
        csp = h["content-security-policy"]
        assert "script-src 'self';" in csp
        assert "frame-ancestors 'none'" in csp
        assert "unsafe-eval" not in csp
        assert h["x-content-type-options"] == "nosniff"
        assert h["referrer-policy"] == "strict-origin-when-cross-origin"


FORM = {"nodes": "2", "months": "12", "utilization": "0.8", "gpu_model": "H100", "name": "csrf"}


@pytest.mark.parametrize(("headers", "allowed"), [
    ({"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"}, True),
    ({"Origin": "http://testserver"}, True),  # older browsers: Origin only
    ({}, True),  # not a browser: no ambient credentials to forge
    ({"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, False),
    ({"Sec-Fetch-Site": "same-site", "Origin": "https://sub.testserver"}, False),
    ({"Origin": "https://evil.example"}, False),
    ({"Origin": "null"}, False),  # sandboxed iframe or data: URL
])
def test_csrf_guard_on_form_posts(client: TestClient, headers: dict[str, str],
                                  allowed: bool) -> None:
    r = client.post("/s", data=FORM, headers=headers, follow_redirects=False)
    if allowed:
        assert r.status_code == 303, r.text
    else:
        _is_problem(r, 403)


def test_csrf_guard_covers_api_posts_from_foreign_pages(client: TestClient) -> None:
    r = client.post("/api/v1/scenarios", json={"name": "x", "inputs": {"nodes": 1}},
                    headers={"Sec-Fetch-Site": "cross-site"})
    _is_problem(r, 403)


@pytest.fixture
def tight_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(rate_limit_requests=3, rate_limit_window_s=3600)
    monkeypatch.setattr(ratelimit, "get_settings", lambda: settings)


def test_compute_endpoints_are_rate_limited(client: TestClient, tight_limit: None) -> None:
    # A unique client address per run: the counter lives in the shared database.
    import uuid

    monkey_client = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.1"
    ratelimit_check = ratelimit.check
    statuses = []
    for _ in range(5):
        try:
            ratelimit_check(monkey_client, "compute")
            statuses.append(200)
        except Exception as exc:  # asserting on the error below
            statuses.append(getattr(exc, "status", 0))
            retry = int(getattr(exc, "headers", {})["Retry-After"])
            assert 1 <= retry <= 3600
    assert statuses == [200, 200, 200, 429, 429]


def test_rate_limit_answers_429_problem_over_http(client: TestClient, tight_limit: None,
                                                  database_url: str) -> None:
    from sqlalchemy import delete

    from app.db import get_engine
    from app.ratelimit.models import RateLimitWindow

    with get_engine(database_url).begin() as conn:  # start from a clean window
        conn.execute(delete(RateLimitWindow).where(RateLimitWindow.bucket.like("testclient|%")))
    body = {"nodes": 1}
    codes = [client.post("/api/v1/tco", json=body).status_code for _ in range(3)]
    assert codes == [200, 200, 200]
    r = client.post("/api/v1/kv-cache", json={})  # the group is shared by compute endpoints
    _is_problem(r, 429)
    assert int(r.headers["retry-after"]) >= 1
    assert client.get("/api/v1/prices").status_code == 200  # reads are not limited


def test_rate_limit_counts_in_batches_shared_through_the_database(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers (two local views) share one window: limit 500 gives batches of 500 // 100
    = 5 hits; with the time-based flush disabled, flushes happen exactly every 5th request."""
    import uuid

    monkeypatch.setattr(ratelimit, "get_settings",
                        lambda: Settings(rate_limit_requests=500, rate_limit_window_s=3600))
    monkeypatch.setattr(ratelimit, "FLUSH_INTERVAL_S", 1e9)
    who = f"batch-{uuid.uuid4().hex}"

    def statuses(n: int) -> list[int]:
        out = []
        for _ in range(n):
            try:
                ratelimit.check(who, "compute")
                out.append(200)
            except Exception as exc:  # asserting on the status below
                out.append(getattr(exc, "status", 0))
        return out

    monkeypatch.setattr(ratelimit, "_windows", {})  # worker A
    assert statuses(500) == [200] * 500  # 100 flushes of 5: the database holds 500
    monkeypatch.setattr(ratelimit, "_windows", {})  # worker B has not flushed yet
    # B's first 4 hits are local only (0 + 4 <= 500: the documented overshoot of batch - 1);
    # the 5th flushes 5, reads 500 + 5 = 505 > 500 and is refused.
    assert statuses(5) == [200, 200, 200, 200, 429]


def _walk(schema: dict[str, Any], defs: dict[str, Any], path: str,
          seen: set[str]) -> Iterator[tuple[str, str]]:
    """(field path, what is missing) for every unbounded number, string or array."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return
        yield from _walk(defs[name], defs, path, seen | {name})
        return
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            yield from _walk(sub, defs, path, seen)
    kind = schema.get("type")
    if kind in ("integer", "number") and not ({"enum", "const"} & schema.keys()):
        if not ({"minimum", "exclusiveMinimum"} & schema.keys()):
            yield path, "no lower bound"
        if not ({"maximum", "exclusiveMaximum"} & schema.keys()):
            yield path, "no upper bound"
    if kind == "string" and "enum" not in schema and "const" not in schema \
            and "maxLength" not in schema and schema.get("format") not in ("date", "date-time"):
        yield path, "no maxLength"
    if kind == "array":
        if "maxItems" not in schema:
            yield path, "no maxItems"
        yield from _walk(schema.get("items", {}), defs, path + "[]", seen)
    for name, sub in schema.get("properties", {}).items():
        yield from _walk(sub, defs, f"{path}.{name}", seen)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _walk(extra, defs, path + ".*", seen)


def test_every_request_field_is_bounded(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    defs = spec["components"]["schemas"]
    missing: list[tuple[str, str]] = []
    for route, ops in spec["paths"].items():
        for method, op in ops.items():
            for param in op.get("parameters", []):
                missing += _walk(param["schema"], defs, f"{method} {route} ?{param['name']}",
                                 set())
            for content in op.get("requestBody", {}).get("content", {}).values():
                missing += _walk(content["schema"], defs, f"{method} {route} body", set())
    assert missing == []


def test_nul_character_is_invalid_input_not_a_server_error(client: TestClient) -> None:
    # PostgreSQL refuses NUL in text; the lookup must answer 422, never 500.
    r = client.post("/api/v1/tco", json={"nodes": 1, "gpu_model": "H\u0000100"})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == PROBLEM
