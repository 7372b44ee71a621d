"""Database engine, ORM base and the one-transaction-per-request session dependency."""

from collections.abc import Iterator
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import Depends
from sqlalchemy import DateTime, Dialect, Engine, MetaData, TypeDecorator, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from app.settings import get_settings

# Stable constraint names, so migrations can alter and drop them on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite has no time zones: it stores UTC
    and we re-attach the zone on the way out)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: pass an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        aware: datetime = value.replace(tzinfo=UTC) if value.tzinfo is None else value
        return aware.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def get_engine(url: str | None = None) -> Engine:
    """One pooled engine per URL (the configured one by default)."""
    return _engine(url or get_settings().database_url)


def clear_engines() -> None:
    """Forget the pooled engines (tests that point the app at another database)."""
    _engine.cache_clear()


@lru_cache(maxsize=8)
def _engine(url: str) -> Engine:
    """`pool_pre_ping` lets the app recover when PostgreSQL restarts."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    # A short connect timeout so requests that need the database answer 503 within seconds
    # while PostgreSQL is down or restarting, instead of hanging on the OS's TCP timeout.
    timeout_s = get_settings().db_connect_timeout_s
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10,
                         pool_timeout=timeout_s, connect_args={"connect_timeout": timeout_s})


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


@lru_cache(maxsize=8)
def _session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(url), expire_on_commit=False)


def session_scope(url: str | None = None) -> Session:
    return _session_factory(url or get_settings().database_url)()


def get_session() -> Iterator[Session]:
    """FastAPI dependency: one request is one transaction (commit at the end, rollback on error)."""
    session = session_scope()
    try:
        yield session
        session.commit()
    except Exception:
        session.rollback()
        raise
    finally:
        session.close()


# Use as `session: Session = DbSession`. FastAPI's default dependency scope ("request") runs the
# commit above after the response is sent, so a client could follow a 303 or use a 201 before
# the row is committed (seen: /s/<id> answered 404 right after "Save & share"). The "function"
# scope commits before the response leaves, and a failed commit becomes an error response.
DbSession = Depends(get_session, scope="function")
