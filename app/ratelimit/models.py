"""One row per (client bucket, window): the number of requests seen in that window."""

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


class RateLimitWindow(Base):
    __tablename__ = "rate_limit_window"

    bucket: Mapped[str] = mapped_column(String(200), primary_key=True)  # "<client>|<group>"
    window_start: Mapped[int] = mapped_column(Integer, primary_key=True)  # unix seconds
    hits: Mapped[int] = mapped_column(Integer)
