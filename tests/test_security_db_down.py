"""With the database unreachable: reads that need it answer 503 problem+json within seconds;
pure computation endpoints (throughput, kv-cache) keep answering 200.

Endpoints that need the database: prices (list, history, push), TCO (price lookups), plan
(price lookups), scenarios, every page showing prices or scenarios. Rate limiting on the compute
endpoints also uses it, but lets requests through when it is down."""

import os
import socket
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app import db
from app.settings import get_settings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once the socket is: connection refused


@pytest.fixture
def dead_db_client() -> Iterator[TestClient]:
    saved = {k: os.environ.get(k) for k in ("DATABASE_URL", "MIGRATE_ON_START",
                                            "LOAD_SNAPSHOT_ON_START", "SEED_EXAMPLES_ON_START")}
    os.environ.update(DATABASE_URL=f"postgresql+psycopg://x@127.0.0.1:{_closed_port()}/x",
                      MIGRATE_ON_START="false", LOAD_SNAPSHOT_ON_START="false",
                      SEED_EXAMPLES_ON_START="false")
    get_settings.cache_clear()
    from app.main import create_app

    try:
        with TestClient(create_app()) as c:
            yield c
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        get_settings.cache_clear()
        db.clear_engines()


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/api/v1/prices", None),
    ("GET", "/api/v1/prices/1/history", None),
    ("GET", "/api/v1/scenarios/abc", None),
    ("POST", "/api/v1/tco", {"nodes": 1}),
])
def test_reads_answer_503_quickly(dead_db_client: TestClient, method: str, path: str,
                                  body: object) -> None:
    start = time.monotonic()
    r = dead_db_client.request(method, path, json=body)
    assert time.monotonic() - start < 5  # connect_timeout is 3 s; refused is immediate
    assert r.status_code == 503, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.headers["retry-after"]


def test_pure_computation_keeps_working(dead_db_client: TestClient) -> None:
    assert dead_db_client.post("/api/v1/throughput", json={}).status_code == 200
    assert dead_db_client.post("/api/v1/kv-cache", json={}).status_code == 200
    assert dead_db_client.get("/healthz").status_code == 200
