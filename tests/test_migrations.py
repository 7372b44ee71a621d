"""Migrations: upgrade to head, down to base, up again; and no drift between models and
migrations (`alembic check`)."""

from alembic import command
from sqlalchemy import inspect

from app import db, migrate


def _tables(url: str) -> set[str]:
    return set(inspect(db.get_engine(url)).get_table_names()) - {"alembic_version"}


def test_upgrade_downgrade_upgrade(scratch_url: str) -> None:
    migrate.upgrade(scratch_url)
    assert {"price_source", "price_item", "price_point"} <= _tables(scratch_url)
    migrate.downgrade(scratch_url, "base")
    assert _tables(scratch_url) == set()
    migrate.upgrade(scratch_url)
    assert "price_point" in _tables(scratch_url)


def test_models_match_migrations(scratch_url: str) -> None:
    migrate.upgrade(scratch_url)
    command.check(migrate.alembic_config(scratch_url))  # raises when autogenerate finds drift
