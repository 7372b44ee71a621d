"""API keys: every write route refuses missing, wrong, revoked and under-scoped keys; the price
push writes one audited point, is idempotent, and conflicts cleanly."""

from decimal import Decimal
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.auth import service as auth
from app.auth.models import ApiKey, AuditEntry
from app.db import session_scope
from app.main import app as the_app
from app.middleware import UNSAFE_METHODS
from app.pricing.models import PricePoint

# Unsafe routes open to anyone, and why: computations write nothing; scenarios are immutable,
# public by design (anyone may save and share), and read back only through their share id.
PUBLIC_WRITES = {
    ("POST", "/api/v1/tco"), ("POST", "/api/v1/tco/sweep"), ("POST", "/api/v1/throughput"),
    ("POST", "/api/v1/kv-cache"),
    ("POST", "/api/v1/plan"), ("POST", "/api/v1/scenarios"),
    ("POST", "/api/v1/scenarios/{share_id}/fork"), ("POST", "/s"),
}


def _write_routes() -> list[tuple[str, str, APIRoute]]:
    """Every unsafe (method, path) the app serves, with included routers flattened."""
    routes = [c.route for c in iter_route_contexts(the_app.routes)]
    return [(m, r.path, r) for r in routes if isinstance(r, APIRoute)
            for m in sorted((r.methods or set()) & UNSAFE_METHODS)]


def _required_scope(route: APIRoute) -> str | None:
    for dep in route.dependant.dependencies:
        scope = getattr(dep.call, "required_scope", None)
        if scope:
            return str(scope)
    return None


PROTECTED = [(m, p) for m, p, _ in _write_routes() if (m, p) not in PUBLIC_WRITES]


def test_every_unlisted_write_route_requires_a_scope() -> None:
    # A new unsafe route fails here until it declares require_scope(...) or is argued public.
    assert PROTECTED, "expected at least the price push"
    unprotected = [(m, p) for m, p, r in _write_routes()
                   if (m, p) not in PUBLIC_WRITES and _required_scope(r) is None]
    assert unprotected == []
    assert {(m, p) for m, p, _ in _write_routes()} >= PUBLIC_WRITES  # the list is not stale


def _issue(database_url: str, *scopes: str, revoked: bool = False) -> str:
    with session_scope(database_url) as session, session.begin():
        issued = auth.create_key(session, "test", list(scopes))
        if revoked:
            auth.revoke_key(session, issued.key.id)
    return issued.token


@pytest.fixture
def keys(client: TestClient, database_url: str) -> dict[str, str]:
    return {"writer": _issue(database_url, "prices:write"),
           "reader": _issue(database_url, "prices:read"),
           "admin": _issue(database_url, "admin"),
           "revoked": _issue(database_url, "prices:write", "admin", revoked=True)}


def _url(path: str) -> str:
    return path.replace("{share_id}", "x").replace("{item_id}", "1")


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_write_route_refuses_bad_keys(client: TestClient, keys: dict[str, str],
                                      method: str, path: str) -> None:
    cases: list[tuple[dict[str, str], int]] = [
        ({}, 401),
        ({"Authorization": "Bearer ctco_wrong"}, 401),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, 401),
        ({"Authorization": f"Bearer {keys['revoked']}"}, 401),
        ({"Authorization": f"Bearer {keys['reader']}"}, 403),
    ]
    for headers, status in cases:
        r = client.request(method, _url(path), json={}, headers=headers)
        assert r.status_code == status, (headers, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        if status == 401:
            assert r.headers["www-authenticate"].startswith("Bearer")


QUOTE: dict[str, Any] = {
    "kind": "gpu_cloud", "name": "H100 SXM, 1-year committed", "unit": "usd_per_gpu_hour",
    "provider": "testcloud", "gpu_model": "H100", "purchase_option": "committed",
    "term_months": 12, "amount": "2.49", "effective_from": "2026-11-01T00:00:00Z",
    "source_name": "testcloud quote Q-1", "source_url": "https://example.com/q1",
}


def _points(database_url: str, provider: str) -> int:
    with session_scope(database_url) as session:
        from app.pricing.models import PriceItem

        return int(session.scalar(select(func.count()).select_from(PricePoint).join(
            PricePoint.item).where(PriceItem.provider == provider)) or 0)


def test_price_push_is_audited_idempotent_and_conflicts(client: TestClient, database_url: str,
                                                        keys: dict[str, str]) -> None:
    quote = {**QUOTE, "provider": f"p{abs(hash(database_url)) % 10**6}"}
    writer = {"Authorization": f"Bearer {keys['writer']}"}
    r = client.post("/api/v1/prices", json=quote, headers=writer)
    assert r.status_code == 201, r.text
    row = r.json()
    assert row["amount"] == 2.49
    assert row["source"] == "testcloud quote Q-1"
    assert row["source_kind"] == "procurement_api"
    # Repeating the same push writes nothing and answers the point in force.
    again = client.post("/api/v1/prices", json=quote, headers=writer)
    assert again.status_code == 200
    assert again.json()["effective_from"] == row["effective_from"]
    assert _points(database_url, quote["provider"]) == 1
    # A different price at the same instant is a conflict, never a second current price.
    clash = client.post("/api/v1/prices", json={**quote, "amount": "2.10"}, headers=writer)
    assert clash.status_code == 409
    assert clash.headers["content-type"] == PROBLEM
    # A later price closes the first; admin may write too. Both pushes are audited.
    later = {**quote, "amount": "2.10", "effective_from": "2026-12-01T00:00:00Z"}
    r2 = client.post("/api/v1/prices", json=later,
                     headers={"Authorization": f"Bearer {keys['admin']}"})
    assert r2.status_code == 201, r2.text
    history = client.get(f"/api/v1/prices/{row['item_id']}/history").json()["points"]
    assert [p["amount"] for p in history] == [2.49, 2.10]
    assert history[0]["effective_to"] == history[1]["effective_from"]
    with session_scope(database_url) as session:
        entries = list(session.scalars(select(AuditEntry).join(ApiKey).where(
            AuditEntry.entity == "price_point",
            AuditEntry.path == "/api/v1/prices").order_by(AuditEntry.id.desc()).limit(2)))
        latest, first = entries
        assert latest.before is not None
        assert Decimal(latest.before["amount"]) == Decimal("2.49")
        assert latest.before["effective_to"] is None  # the state before the change
        assert latest.after is not None
        assert Decimal(latest.after["amount"]) == Decimal("2.1")
        assert first.before is None
        assert first.method == "POST"


PROBLEM = "application/problem+json"


@pytest.mark.parametrize("change", [
    {"amount": "-1"}, {"amount": "NaN"}, {"effective_from": "2026-11-01T00:00:00"},
    {"low": "3", "high": "2"}, {"term_months": 0}, {"source_url": "javascript:alert(1)"},
    {"surprise": 1},
])
def test_price_push_rejects_bad_input(client: TestClient, keys: dict[str, str],
                                      change: dict[str, Any]) -> None:
    r = client.post("/api/v1/prices", json={**QUOTE, **change},
                    headers={"Authorization": f"Bearer {keys['writer']}"})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == PROBLEM
    assert r.json()["errors"]


def test_tokens_are_stored_only_as_hashes(database_url: str) -> None:
    token = _issue(database_url, "prices:read")
    with session_scope(database_url) as session:
        key = session.scalar(select(ApiKey).where(ApiKey.token_sha256 == auth.token_hash(token)))
        assert key is not None
        assert token not in (key.token_sha256, key.token_prefix)
        assert len(token) >= 40  # 32 random bytes, base64url, plus the prefix


def test_cli_creates_lists_and_revokes(database_url: str, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from app import cli
    from app.settings import get_settings

    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        assert cli.main(["keys", "create", "--name", "cli-test", "--scope", "prices:write"]) == 0
        out = capsys.readouterr().out
        key_id = int(out.split()[1])
        token = out.strip().split()[-1]
        assert cli.main(["keys", "list"]) == 0
        listing = capsys.readouterr().out
        assert "cli-test" in listing
        assert token not in listing
        assert cli.main(["keys", "revoke", str(key_id)]) == 0
        with session_scope(database_url) as session, \
                pytest.raises(Exception, match="invalid or revoked"):
                auth.authenticate(session, token, "prices:write")
        assert cli.main(["keys", "revoke", "99999999"]) == 2
    finally:
        monkeypatch.delenv("DATABASE_URL")
        get_settings.cache_clear()


def test_concurrent_pushes_for_one_item_resolve_deterministically(
        client: TestClient, database_url: str, keys: dict[str, str]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    provider = f"race{abs(hash((database_url, 'race'))) % 10**6}"
    same = {**QUOTE, "provider": provider}
    other = {**same, "amount": "3.00"}
    writer = {"Authorization": f"Bearer {keys['writer']}"}
    bodies = [same] * 6 + [other] * 3
    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        responses = list(pool.map(
            lambda b: client.post("/api/v1/prices", json=b, headers=writer), bodies))
    statuses = [r.status_code for r in responses]
    assert statuses.count(201) == 1, statuses
    winner = next(r.json() for r in responses if r.status_code == 201)
    for body, r in zip(bodies, responses, strict=True):
        if r.status_code == 201:
            continue
        # The loser's outcome follows from the winner: same price 200, different price 409.
        # SQLite may also refuse a racing writer outright (503, retryable); never anything else.
        expected = 200 if float(body["amount"]) == winner["amount"] else 409
        assert r.status_code in (expected, 503), (statuses, r.text)
    assert _points(database_url, provider) == 1
