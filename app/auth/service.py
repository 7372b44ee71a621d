"""Issuing, checking and revoking API keys; recording audited writes."""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from app.auth import repository
from app.auth.models import ApiKey, AuditEntry
from app.errors import Forbidden, NotFound, Unauthorized

SCOPES = ("prices:read", "prices:write", "admin")  # admin grants every scope
TOKEN_PREFIX = "ctco_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedKey:
    key: ApiKey
    token: str  # shown once; only its hash is stored


def create_key(session: Session, name: str, scopes: list[str]) -> IssuedKey:
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise ValueError(f"scopes must be among {', '.join(SCOPES)}; got {scopes}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)  # 256 bits
    key = repository.add_key(session, name=name, token_sha256=token_hash(token),
                             token_prefix=token[:12], scopes=" ".join(sorted(set(scopes))),
                             created_at=datetime.now(UTC))
    return IssuedKey(key, token)


def revoke_key(session: Session, key_id: int) -> ApiKey:
    key = session.get(ApiKey, key_id)
    if key is None:
        raise NotFound(f"no API key {key_id}")
    if key.revoked_at is None:
        key.revoked_at = datetime.now(UTC)
        session.flush()
    return key


def authenticate(session: Session, token: str | None, scope: str) -> ApiKey:
    """The key behind `token` if it is live and grants `scope`: 401 when missing, unknown or
    revoked (one message, so a caller learns nothing about which), 403 when under-scoped."""
    if not token:
        raise Unauthorized("this endpoint needs an API key: Authorization: Bearer <token>")
    digest = token_hash(token)
    key = repository.key_by_hash(session, digest)
    # The lookup is by hash, so timing says nothing about the token; compare_digest keeps the
    # final check constant-time anyway.
    if key is None or not hmac.compare_digest(key.token_sha256, digest) or key.revoked_at:
        raise Unauthorized("invalid or revoked API key")
    if scope not in key.scope_set and "admin" not in key.scope_set:
        raise Forbidden(f"this API key lacks the {scope!r} scope")
    return key


def audit(session: Session, key: ApiKey, *, method: str, path: str, entity: str,
          entity_id: object, before: dict[str, Any] | None,
          after: dict[str, Any] | None) -> None:
    """Record a write in the caller's transaction (it commits or rolls back with the change)."""
    repository.add_audit(session, AuditEntry(
        api_key_id=key.id, at=datetime.now(UTC), method=method, path=path, entity=entity,
        entity_id=str(entity_id),
        before=None if before is None else repository.audit_snapshot(before),
        after=None if after is None else repository.audit_snapshot(after)))
