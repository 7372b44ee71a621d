"""API keys (only their SHA-256 is stored) and the audit log of writes."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, UtcDateTime


class ApiKey(Base):
    __tablename__ = "api_key"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    # sha256 hex of the token. The token has 256 bits of entropy, so a fast unsalted hash is
    # enough: there is no dictionary to try, and the database never holds the token itself.
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    # The token's first characters, so an operator can tell keys apart in `keys list`.
    token_prefix: Mapped[str] = mapped_column(String(16))
    scopes: Mapped[str] = mapped_column(String(200))  # space-separated, e.g. "prices:write"
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())


class AuditEntry(Base):
    """One write: who (the key), when, the request, the entity and its state before/after.
    Written in the same transaction as the change, so it exists exactly when the change does."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    api_key_id: Mapped[int] = mapped_column(ForeignKey("api_key.id", ondelete="RESTRICT"))
    at: Mapped[datetime] = mapped_column(UtcDateTime())
    method: Mapped[str] = mapped_column(String(8))
    path: Mapped[str] = mapped_column(Text)
    entity: Mapped[str] = mapped_column(String(64))  # table name, e.g. "price_point"
    entity_id: Mapped[str] = mapped_column(String(64))
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)

    __table_args__ = (Index("ix_audit_log_entity", "entity", "entity_id"),
                      Index("ix_audit_log_api_key_id", "api_key_id"))
