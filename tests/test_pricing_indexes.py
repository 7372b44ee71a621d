"""On PostgreSQL, resolving prices "as of" a date is an index lookup, not a table scan.

The tables in a test are tiny, so the planner would rightly scan them; `enable_seqscan = off`
asks whether an index path *exists* for the query `prices_as_of` actually sends."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from app.pricing import repository
from app.pricing.models import PriceKind


def _plan(session: Session, filters: dict[str, object]) -> str:
    stmt = repository.as_of_statement(datetime(2026, 1, 1, tzinfo=UTC), filters)
    dialect = postgresql.psycopg.dialect()  # type: ignore[no-untyped-call]
    sql = stmt.compile(dialect=dialect, compile_kwargs={"literal_binds": True})
    session.execute(text("SET LOCAL enable_seqscan = off"))
    return "\n".join(session.execute(text(f"EXPLAIN {sql}")).scalars())


@pytest.mark.parametrize("filters", [
    {"kind": PriceKind.cloud_instance, "instance_type": "p5.48xlarge", "region": "us-east-1"},
    {"kind": PriceKind.equipment, "category": "gpu"},
])
def test_as_of_resolution_uses_indexes_on_postgresql(session: Session,
                                                     filters: dict[str, object]) -> None:
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("query plans are checked on PostgreSQL")
    plan = _plan(session, filters)
    assert "Seq Scan on price_point" not in plan, plan
    assert "Seq Scan on price_item" not in plan, plan
    assert "uq_price_point_item_id_effective_from" in plan or "ix_price_point" in plan, plan
