"""API key and audit queries. Flush, never commit: the caller owns the transaction."""

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.models import ApiKey, AuditEntry


def add_key(session: Session, *, name: str, token_sha256: str, token_prefix: str,
            scopes: str, created_at: datetime) -> ApiKey:
    key = ApiKey(name=name, token_sha256=token_sha256, token_prefix=token_prefix,
                 scopes=scopes, created_at=created_at)
    session.add(key)
    session.flush()
    return key


def key_by_hash(session: Session, token_sha256: str) -> ApiKey | None:
    return session.scalar(select(ApiKey).where(ApiKey.token_sha256 == token_sha256))


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.id)))


def add_audit(session: Session, entry: AuditEntry) -> None:
    session.add(entry)
    session.flush()


def audit_for(session: Session, entity: str, entity_id: str) -> list[AuditEntry]:
    return list(session.scalars(select(AuditEntry).where(
        AuditEntry.entity == entity, AuditEntry.entity_id == entity_id).order_by(AuditEntry.id)))


def audit_snapshot(values: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe copy of an entity's values (datetimes and decimals as strings)."""
    return {k: (v if v is None or isinstance(v, (bool, int, float, str)) else str(v))
            for k, v in values.items()}
