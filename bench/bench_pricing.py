"""Pricing store speed: resolving prices "as of" a date over a store with long histories.

Builds a throw-away SQLite store (the snapshot plus 2,000 synthetic spot items x 50 dated
points = 100,000 points), then times `prices_as_of` for one instance type and the browser's
full, unfiltered page. Set BENCH_DATABASE_URL to an empty PostgreSQL database to measure there."""

import os
import tempfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from sqlalchemy import insert
from sqlalchemy.orm import Session

from app import db, migrate
from app.pricing import repository, service
from app.pricing.models import PriceItem, PriceKind, PricePoint, PriceUnit, SourceKind
from app.pricing.schemas import PriceQuery
from app.pricing.snapshot import load_snapshot
from bench.timing import best_of

ITEMS, POINTS = 2_000, 50
START = datetime(2024, 1, 1, tzinfo=UTC)


def _fill(session: Session) -> None:
    load_snapshot(session)
    src = repository.get_or_create_source(session, name="bench", kind=SourceKind.manual,
                                          retrieved_at=START)
    items = [{"item_key": f"spot/bench/{i}", "kind": PriceKind.spot, "name": f"bench {i}",
              "unit": PriceUnit.usd_per_hour, "provider": "bench", "region": f"r{i % 20}",
              "instance_type": f"t{i % 100}", "gpu_count": 8} for i in range(ITEMS)]
    session.execute(insert(PriceItem), items)
    ids = [item.id for item in session.query(PriceItem).filter_by(provider="bench")]
    points = []
    for item_id in ids:
        for k in range(POINTS):
            points.append({"item_id": item_id, "source_id": src.id, "currency": "USD",
                           "amount": Decimal(10 + k % 7), "retrieved_at": START,
                           "effective_from": START + timedelta(days=7 * k),
                           "effective_to": START + timedelta(days=7 * (k + 1))
                           if k < POINTS - 1 else None})
    session.execute(insert(PricePoint), points)
    session.commit()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{tmp}/bench.db"
        migrate.upgrade(url)
        with Session(db.get_engine(url)) as session:
            _fill(session)
            when = START + timedelta(days=200)
            one = best_of(lambda: repository.prices_as_of(
                session, when, {"kind": PriceKind.spot, "instance_type": "t7"}), number=20)
            page = best_of(lambda: service.browse(session, PriceQuery(limit=100)), number=3)
        db.get_engine(url).dispose()
    print(f"store: {ITEMS} items x {POINTS} points + snapshot ({url.split(':')[0]})")
    print(f"prices_as_of, one instance type (20 items): {one * 1e3:.2f} ms")
    print(f"browser page, all {ITEMS}+ items resolved, sorted, first 100: {page * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
