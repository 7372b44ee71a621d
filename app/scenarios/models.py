"""Saved scenarios: immutable, shareable snapshots of a computation's inputs.

One table for every kind of result. A row stores the inputs as JSON under a `kind` ("tco"
today; "throughput" and "plan" when those engines land) and the `schema_version` of that
kind's input model, so a new kind or a reshaped input is a new registry entry in
`schemas.INPUT_MODELS`, never a new table. The pricing date is pinned in `as_of` (and inside
the inputs): prices are history that is never overwritten, so recomputing the same inputs as of
the same date shows the same numbers after prices are refreshed.
"""

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, UtcDateTime


class Scenario(Base):
    __tablename__ = "scenario"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # secrets.token_urlsafe(16): 22 characters, 128 bits. Seeded examples use readable ids.
    share_id: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    schema_version: Mapped[int] = mapped_column(Integer)
    inputs: Mapped[dict[str, Any]] = mapped_column(JSON)
    as_of: Mapped[date] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    forked_from_id: Mapped[int | None] = mapped_column(
        ForeignKey("scenario.id", ondelete="SET NULL"), index=True)

    forked_from: Mapped["Scenario | None"] = relationship(remote_side=[id])
