"""Answers and price books are cached per process, keyed by the price store's version: a
repeated question is answered without recomputing, and a price write reaches the very next
answer (every worker reads the version from the database on each request)."""

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth import service as auth
from app.db import session_scope
from app.pricing import repository
from app.pricing.book import price_book
from app.pricing.models import PriceKind, PriceUnit, PurchaseOption, SourceKind
from app.web import routes as web_routes

AS_OF = "2026-06-30"


def _writer(database_url: str) -> dict[str, str]:
    with session_scope(database_url) as session, session.begin():
        token = auth.create_key(session, "cache test", ["prices:write"]).token
    return {"Authorization": f"Bearer {token}"}


def _push(client: TestClient, headers: dict[str, str], gpu: str, usd: str, since: str) -> None:
    quote = {"kind": "gpu_cloud", "name": f"{gpu} on-demand", "unit": "usd_per_gpu_hour",
             "provider": "cachecloud", "gpu_model": gpu, "purchase_option": "on_demand",
             "amount": usd, "effective_from": f"{since}T00:00:00Z",
             "source_name": "cache test quote", "source_url": "https://example.com/q"}
    r = client.post("/api/v1/prices", json=quote, headers=headers)
    assert r.status_code == 201, r.text


def _on_demand_usd(client: TestClient, gpu: str) -> float:
    body: dict[str, Any] = {"nodes": 1, "months": 1, "utilization": 1.0, "gpu_model": gpu,
                            "as_of": AS_OF}
    r = client.post("/api/v1/tco", json=body)
    assert r.status_code == 200, r.text
    options = {o["key"]: o for o in r.json()["options"]}
    return float(options["gpu_cloud_cachecloud_on_demand"]["total_usd"])


def test_a_price_push_reaches_the_next_answer(client: TestClient, database_url: str) -> None:
    gpu, writer = f"T{uuid.uuid4().hex[:8]}", _writer(database_url)
    _push(client, writer, gpu, "2.00", "2026-01-01")
    first = _on_demand_usd(client, gpu)
    assert _on_demand_usd(client, gpu) == first  # answered again (from the cache)
    _push(client, writer, gpu, "3.00", "2026-03-01")  # in force on AS_OF from now on
    # One node of 8 GPUs for one 730-h month at full use: +$1.00/GPU-h × 8 × 730 = +$5,840
    # (the rest of the bill, e.g. storage, does not depend on the GPU price).
    assert _on_demand_usd(client, gpu) - first == pytest.approx(5_840.0, abs=1e-6)


def test_a_share_page_renders_once_per_store_version(client: TestClient, database_url: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    gpu, writer = f"T{uuid.uuid4().hex[:8]}", _writer(database_url)
    _push(client, writer, gpu, "2.00", "2026-01-01")
    saved = client.post("/api/v1/scenarios", json={"name": "cached", "inputs": {
        "nodes": 1, "months": 1, "gpu_model": gpu, "as_of": AS_OF}})
    assert saved.status_code == 201, saved.text
    page = saved.json()["links"]["page"]
    renders = []
    render = web_routes._shared_page

    def counted(*args: Any) -> bytes:
        renders.append(1)
        return render(*args)

    monkeypatch.setattr(web_routes, "_shared_page", counted)
    first = client.get(page)
    assert first.status_code == 200
    assert client.get(page).text == first.text
    assert len(renders) == 1
    _push(client, writer, gpu, "3.00", "2026-03-01")  # recorded after the save
    again = client.get(page)
    assert len(renders) == 2  # a new store version re-renders ...
    assert again.text == first.text  # ... the same numbers: the scenario's prices are pinned


def test_a_book_sees_its_own_session_writes_and_forgets_them_on_rollback(
        database_url: str) -> None:
    gpu, as_of = f"T{uuid.uuid4().hex[:8]}", datetime(2026, 6, 30, tzinfo=UTC)
    with session_scope(database_url) as session:
        assert price_book(session, as_of).find(gpu_model=gpu) == []
        _record(session, gpu)
        found = price_book(session, as_of).find(gpu_model=gpu)  # after the flush
        assert [p.amount for p in found] == [Decimal("2.5")]
        session.rollback()
    with session_scope(database_url) as other:
        assert price_book(other, as_of).find(gpu_model=gpu) == []


def _record(session: Session, gpu: str) -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    source = repository.get_or_create_source(session, name="book test", retrieved_at=when,
                                             kind=SourceKind.manual)
    fields = {"kind": PriceKind.gpu_cloud, "provider": "bookcloud", "gpu_model": gpu,
              "purchase_option": PurchaseOption.on_demand}
    item = repository.get_or_create_item(session, repository.item_key(fields),
                                         name=f"{gpu} on-demand",
                                         unit=PriceUnit.usd_per_gpu_hour, **fields)
    repository.record_price(session, item, source, repository.NewPrice(
        amount=Decimal("2.5"), effective_from=when, retrieved_at=when))


def test_another_workers_write_is_seen_within_the_version_ttl(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write this process did not make (raw SQL: no session commit hook fires) is seen once
    the known version is `TTL_S` old; before that, the known version is served."""
    from sqlalchemy import text

    from app.db import get_engine
    from app.pricing import version

    clock = [1_000.0]
    monkeypatch.setattr(version, "_clock", lambda: clock[0])
    monkeypatch.setattr(version, "_known", {})
    with get_engine(database_url).connect() as conn, conn.begin() as outer:
        session = Session(bind=conn, join_transaction_mode="create_savepoint")
        before = version.current(session)
        conn.execute(text("UPDATE price_point SET recorded_at = :t WHERE id = "
                          "(SELECT max(id) FROM price_point)"),
                     {"t": datetime(2099, 1, 1, tzinfo=UTC)})
        clock[0] += version.TTL_S * 0.99
        assert version.current(session) == before  # still the version read 0.99 TTL ago
        clock[0] += version.TTL_S * 0.02
        after = version.current(session)
        assert after != before
        assert after[1] == datetime(2099, 1, 1, tzinfo=UTC)
        session.close()
        outer.rollback()
