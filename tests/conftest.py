"""Test fixtures: every database test runs on SQLite, and on PostgreSQL too when
TEST_DATABASE_URL is set (CI sets it and CLUSTERTCO_REQUIRE_POSTGRES=1 so a skip is a failure)."""

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from app import db, migrate
from app.settings import get_settings

PG_URL = os.environ.get("TEST_DATABASE_URL", "")
REQUIRE_PG = os.environ.get("CLUSTERTCO_REQUIRE_POSTGRES") == "1"
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def pytest_configure(config: pytest.Config) -> None:
    if REQUIRE_PG and not PG_URL:
        raise pytest.UsageError("CLUSTERTCO_REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set")


def _fresh_postgres_database() -> tuple[str, str]:
    """Create an empty database on the TEST_DATABASE_URL server; returns (url, name)."""
    name = f"clustertco_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False), name


def _drop_postgres_database(name: str) -> None:
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """"sqlite", or "postgresql" when TEST_DATABASE_URL is set."""
    if request.param == "postgresql" and not PG_URL:
        pytest.skip("TEST_DATABASE_URL not set: PostgreSQL tests skipped")
    return str(request.param)


def _empty_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if backend == "sqlite":
        path: Path = tmp_path_factory.mktemp("db") / "test.db"
        yield f"sqlite:///{path}"
        return
    url, name = _fresh_postgres_database()
    try:
        yield url
    finally:
        db.clear_engines()
        _drop_postgres_database(name)


@pytest.fixture(scope="session")
def empty_database_url(backend: str,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty database (no tables) of each backend, for the whole session."""
    yield from _empty_database(backend, tmp_path_factory)


@pytest.fixture(scope="session")
def database_url(empty_database_url: str) -> str:
    """The app's database, migrated to head. The `client` fixture (and anything else that
    starts the app) loads the snapshot and seeds the examples into it and tests commit through
    the API, so its content depends on which tests ran before: assert only on what you wrote."""
    migrate.upgrade(empty_database_url)
    return empty_database_url


@pytest.fixture(scope="session")
def store_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second database of the same backend, migrated to head, that only the `session`
    fixture uses and that nothing ever commits to: the empty store every such test starts
    from, whatever ran before (the app's start-up writes to `database_url`, not here)."""
    for url in _empty_database(backend, tmp_path_factory):
        migrate.upgrade(url)
        yield url


def _rolled_back_session(url: str) -> Iterator[Session]:
    engine = db.get_engine(url)
    with engine.connect() as conn:
        trans = conn.begin()
        with Session(bind=conn, join_transaction_mode="create_savepoint") as s:
            yield s
        trans.rollback()


@pytest.fixture
def session(store_url: str) -> Iterator[Session]:
    """A session over an empty, migrated store (no snapshot, no examples) whose work is rolled
    back after the test. Load the snapshot in the test if it needs prices."""
    yield from _rolled_back_session(store_url)


@pytest.fixture
def app_session(client: TestClient, database_url: str) -> Iterator[Session]:
    """A session over the app's database after start-up (snapshot loaded, examples seeded),
    rolled back after the test: for tests that check what the app itself wrote."""
    yield from _rolled_back_session(database_url)


@pytest.fixture(scope="session")
def client(database_url: str) -> Iterator[TestClient]:
    """The real app over the real database (migrations and snapshot load run at start-up)."""
    os.environ["DATABASE_URL"] = database_url
    get_settings.cache_clear()
    from app.main import create_app

    with TestClient(create_app()) as c:
        yield c
    os.environ.pop("DATABASE_URL", None)
    get_settings.cache_clear()


@pytest.fixture(params=BACKENDS)
def scratch_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each backend for one test (migrations up and down)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'scratch.db'}"
        return
    if not PG_URL:
        pytest.skip("TEST_DATABASE_URL not set: PostgreSQL tests skipped")
    url, name = _fresh_postgres_database()
    yield url
    db.get_engine(url).dispose()
    _drop_postgres_database(name)


_skipped_postgres: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and "postgres" in report.keywords:
        _skipped_postgres.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if REQUIRE_PG and _skipped_postgres:
        print(f"\n{len(_skipped_postgres)} PostgreSQL tests were skipped but CI requires them")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
