"""Schemathesis over the whole OpenAPI schema, in process against the ASGI app: no 5xx, every
status and content type documented, every response body valid against its schema.

Bounded: a fixed number of generated cases per operation (>= 1,000 in total; counted and
asserted), no shrinking deadline."""

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.settings import get_settings
from tests.conftest import PG_URL

EXAMPLES_PER_OPERATION = 100
EXAMPLES_PLAN = 40  # one planner search costs ~0.4 s; the planner gets fewer cases
MIN_CASES = 1000
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
calls: dict[str, int] = {}


def _app() -> object:
    # The schema is loaded at import (collection) time, before the `client` fixture sets
    # DATABASE_URL; the lazy fixture below points the app at the migrated test database.
    from app.main import create_app

    return create_app()


# Filters of one schema combine with OR, so both selections start from the unfiltered schema.
full_schema = schemathesis.openapi.from_asgi("/openapi.json", _app())
PLAN = r"^/api/v1/plan$"


@pytest.fixture(scope="module")
def api_database(database_url: str) -> Iterator[str]:
    # One backend is enough to bound the time: PostgreSQL when the run has it (CI), else SQLite.
    if PG_URL and database_url.startswith("sqlite"):
        pytest.skip("schemathesis runs on PostgreSQL in this run")
    os.environ["DATABASE_URL"] = database_url
    get_settings.cache_clear()
    from app.main import prepare_database

    prepare_database()
    yield database_url
    os.environ.pop("DATABASE_URL", None)
    get_settings.cache_clear()


def _check(case: Case[Any]) -> None:
    calls[case.operation.label] = calls.get(case.operation.label, 0) + 1
    case.call_and_validate(checks=CHECKS)


BOUNDED = settings(deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                   suppress_health_check=list(HealthCheck))


@full_schema.include(path_regex=r"^/api/v1/").exclude(path_regex=PLAN).parametrize()
@settings(BOUNDED, max_examples=EXAMPLES_PER_OPERATION)
def test_api_conforms_to_its_schema(case: Case[Any], api_database: str) -> None:
    _check(case)


@full_schema.include(path_regex=PLAN).parametrize()
@settings(BOUNDED, max_examples=EXAMPLES_PLAN)
def test_planner_api_conforms_to_its_schema(case: Case[Any], api_database: str) -> None:
    _check(case)


def test_enough_cases_were_generated() -> None:
    if not calls:
        pytest.skip("run together with the schemathesis tests above")
    print(f"\nschemathesis: {sum(calls.values())} cases over {len(calls)} operations")
    assert sum(calls.values()) >= MIN_CASES, calls
