"""Scenario queries. Flush, never commit: the caller owns the transaction."""

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.scenarios.models import Scenario


def add(session: Session, scenario: Scenario) -> Scenario:
    session.add(scenario)
    session.flush()
    return scenario


def get_by_share_id(session: Session, share_id: str) -> Scenario | None:
    return session.scalar(select(Scenario).where(Scenario.share_id == share_id))


def list_by_share_ids(session: Session, share_ids: list[str]) -> list[Scenario]:
    rows = session.scalars(select(Scenario).where(Scenario.share_id.in_(share_ids)))
    order = {s: i for i, s in enumerate(share_ids)}
    return sorted(rows, key=lambda s: order[s.share_id])
