"""Fixed-window counter in the database: one upsert per request, shared by all workers.

Why the database and not process memory: the app scales out by adding workers and hosts, and
a per-process counter would multiply the limit by their number. The counter runs in its own
short transaction (not the request's), so a row lock is held for one statement only and a
failed request still counts. When the database is unreachable the limiter lets the request
through: pure computation endpoints must keep working while PostgreSQL restarts."""

import logging
import time
from typing import Any

from fastapi import Depends, Request
from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.db import get_engine
from app.errors import TooManyRequests
from app.ratelimit.models import RateLimitWindow
from app.settings import get_settings

log = logging.getLogger(__name__)


def hit(conn: Connection, bucket: str, window_start: int) -> int:
    """Count one request in `bucket`'s window; returns the window's count including it."""
    row = RateLimitWindow
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    upsert = insert(row).values(bucket=bucket, window_start=window_start, hits=1)
    stmt = upsert.on_conflict_do_update(index_elements=["bucket", "window_start"],
                                        set_={"hits": row.hits + 1}).returning(row.hits)
    hits = int(conn.execute(stmt).scalar_one())
    if hits == 1:  # first request of a new window: drop this bucket's old windows
        conn.execute(delete(row).where(row.bucket == bucket, row.window_start < window_start))
    return hits


def check(client: str, group: str) -> None:
    settings = get_settings()
    limit, window_s = settings.rate_limit_requests, settings.rate_limit_window_s
    if limit <= 0:
        return
    now = time.time()
    window_start = int(now // window_s * window_s)
    try:
        with get_engine().begin() as conn:
            hits = hit(conn, f"{client}|{group}"[:200], window_start)
    except (DBAPIError, PoolTimeout) as exc:
        log.warning("rate limiter skipped, database unavailable: %s", exc)
        return
    if hits > limit:
        retry_after_s = max(1, int(window_start + window_s - now + 0.999))
        raise TooManyRequests(f"more than {limit} requests in {window_s} s to the compute "
                              f"endpoints; retry in {retry_after_s} s", retry_after_s)


def limited(group: str) -> Any:
    """Router dependency: `dependencies=[limited("compute")]`."""

    def dependency(request: Request) -> None:
        check(request.client.host if request.client else "unknown", group)

    return Depends(dependency)
