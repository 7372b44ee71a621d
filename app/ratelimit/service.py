"""Fixed-window counter in the database, shared by all workers, added to in batches.

Why the database and not process memory: the app scales out by adding workers and hosts, and
a per-process counter would multiply the limit by their number. Why batches: one upsert per
request serialised every compute request on the window's row (on SQLite, on the whole file),
which halved throughput under load. Each worker now counts locally and adds its count to the
shared row every `limit // 100` requests or every `FLUSH_INTERVAL_S`, whichever comes first; it
decides on "shared count at its last flush + its own unflushed count". The overshoot is
bounded: each other worker holds at most 1 % of the limit plus `FLUSH_INTERVAL_S` of its
traffic unflushed. A small limit (under 200) gives batches of one, i.e. an exact shared count.

The counter runs in its own short transaction (not the request's), so a row lock is held for
one statement only and a failed request still counts. When the database is unreachable the
limiter lets the request through: pure computation endpoints must keep working while
PostgreSQL restarts."""

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Request
from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.concurrency import run_in_threadpool

from app.db import get_engine
from app.errors import TooManyRequests
from app.ratelimit.models import RateLimitWindow
from app.settings import get_settings

log = logging.getLogger(__name__)

BATCHES_PER_LIMIT = 100  # a batch is 1 % of the limit
FLUSH_INTERVAL_S = 0.2
MAX_TRACKED_BUCKETS = 4096


def hit(conn: Connection, bucket: str, window_start: int, count: int = 1) -> int:
    """Add `count` requests to `bucket`'s window; returns the window's count including them."""
    row = RateLimitWindow
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    upsert = insert(row).values(bucket=bucket, window_start=window_start, hits=count)
    stmt = upsert.on_conflict_do_update(index_elements=["bucket", "window_start"],
                                        set_={"hits": row.hits + count}).returning(row.hits)
    hits = int(conn.execute(stmt).scalar_one())
    if hits == count:  # first write to a new window: drop this bucket's old windows
        conn.execute(delete(row).where(row.bucket == bucket, row.window_start < window_start))
    return hits


@dataclass
class _Window:
    """This worker's view of one bucket's current window."""

    start: int
    shared_hits: int = 0  # the database's count at this worker's last flush
    pending_hits: int = 0  # counted here, not yet added to the database
    flushed_at: float = 0.0


_windows: dict[str, _Window] = {}
_lock = threading.Lock()


def check(client: str, group: str) -> None:
    """Count one request of `client` to `group`; TooManyRequests over the limit."""
    due = _count_locally(client, group)
    if due is not None:
        _flush(*due)
    _decide(client, group)


def _count_locally(client: str, group: str) -> tuple[_Window, str, int] | None:
    """Count one request in this worker; returns (window, bucket, hits to add to the
    database) when a flush is due."""
    limit, window_s = _limits()
    if limit <= 0:
        return None
    now, bucket = time.time(), _bucket(client, group)
    start = int(now // window_s * window_s)
    with _lock:
        w = _windows.get(bucket)
        if w is None or w.start != start:
            if len(_windows) >= MAX_TRACKED_BUCKETS:
                for key in [k for k, v in _windows.items() if v.start < start]:
                    del _windows[key]
            w = _windows[bucket] = _Window(start)
        w.pending_hits += 1
        if w.pending_hits < max(1, limit // BATCHES_PER_LIMIT) \
                and now - w.flushed_at < FLUSH_INTERVAL_S:
            return None
        flush, w.pending_hits, w.flushed_at = w.pending_hits, 0, now
    return w, bucket, flush


def _flush(w: _Window, bucket: str, hits: int) -> None:
    try:
        with get_engine().begin() as conn:
            w.shared_hits = hit(conn, bucket, w.start, hits)  # the database is authoritative
    except (DBAPIError, PoolTimeout) as exc:
        log.warning("rate limiter skipped, database unavailable: %s", exc)
        w.shared_hits = 0  # let requests through rather than refuse on stale counts


def _decide(client: str, group: str) -> None:
    limit, window_s = _limits()
    w = _windows.get(_bucket(client, group))
    if limit <= 0 or w is None or w.shared_hits + w.pending_hits <= limit:
        return
    retry_after_s = max(1, int(w.start + window_s - time.time() + 0.999))
    raise TooManyRequests(f"more than {limit} requests in {window_s} s to the compute "
                          f"endpoints; retry in {retry_after_s} s", retry_after_s)


def _limits() -> tuple[int, int]:
    settings = get_settings()
    return settings.rate_limit_requests, settings.rate_limit_window_s


def _bucket(client: str, group: str) -> str:
    return f"{client}|{group}"[:200]


def limited(group: str) -> Any:
    """Router dependency: `dependencies=[limited("compute")]`. Counts on the event loop; only
    a due flush goes to a worker thread (it needs the database)."""

    async def dependency(request: Request) -> None:
        client = request.client.host if request.client else "unknown"
        due = _count_locally(client, group)
        if due is not None:
            await run_in_threadpool(_flush, *due)
        _decide(client, group)

    return Depends(dependency)
