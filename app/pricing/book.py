"""The prices in force at an instant, resolved once and shared by every request that asks.

A TCO comparison or a plan makes dozens of lookups; a share page recomputes a saved scenario
on every view. Resolving history (`repository.prices_as_of`) and building ORM objects took
most of a request's time, so a resolved book is kept per process, keyed by what determines
its content: the database, the store's version (any price write changes it; see
`app.pricing.version` for how soon each worker sees a write), the instant and the `known_at`
cut-off. This is a cache, not state: losing it changes nothing but speed.

The points are detached from any session and must be treated as read-only."""

import threading
from collections import OrderedDict
from collections.abc import Hashable
from datetime import datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from app.pricing import repository, version
from app.pricing.models import PricePoint

SESSION_KEY = "clustertco.price_books"
MAX_BOOKS = 16  # distinct (as_of, cut-off) pairs in use at once: today, saved scenarios' dates


class PriceBook:
    """Every point in force, in the store's order, with memoized exact-match filtering."""

    def __init__(self, points: list[PricePoint]) -> None:
        self.points = tuple(points)
        self._found: dict[Hashable, list[PricePoint]] = {}

    def find(self, **filters: Any) -> list[PricePoint]:
        """Points whose item matches every non-None filter (the `prices_as_of` filters)."""
        wanted = tuple(sorted((k, v) for k, v in filters.items() if v is not None))
        found = self._found.get(wanted)
        if found is None:
            for name, _ in wanted:
                if name not in repository.FILTERABLE:
                    raise ValueError(f"unknown price filter {name!r}")
            found = [p for p in self.points
                     if all(getattr(p.item, k) == v for k, v in wanted)]
            self._found[wanted] = found
        return list(found)

    def offers(self, **filters: Any) -> list[PricePoint]:
        """`find`, without market observations: the rows a way of paying may be priced from."""
        return [p for p in self.find(**filters) if p.item.is_offer]


_books: OrderedDict[Hashable, PriceBook] = OrderedDict()
_lock = threading.Lock()


def price_book(session: Session, as_of: datetime) -> PriceBook:
    """The book of prices in force at `as_of` (as known at the current `known_at` cut-off).
    Remembered by the session too, until it writes something (see `_forget`)."""
    cutoff = repository.known_at_cutoff()
    mine: dict[Hashable, PriceBook] = session.info.setdefault(SESSION_KEY, {})
    book = mine.get((as_of, cutoff))
    if book is None:
        book = mine[(as_of, cutoff)] = _shared_book(session, as_of, cutoff)
    return book


@event.listens_for(Session, "after_flush")
def _forget(session: Session, _context: object) -> None:
    session.info.pop(SESSION_KEY, None)


def _shared_book(session: Session, as_of: datetime, cutoff: datetime | None) -> PriceBook:
    key = (str(session.get_bind().engine.url), version.current(session), as_of, cutoff)
    with _lock:
        book = _books.get(key)
        if book is not None:
            _books.move_to_end(key)
            return book
    book = PriceBook(_load(session, as_of))
    with _lock:
        _books[key] = book
        while len(_books) > MAX_BOOKS:
            _books.popitem(last=False)
    return book


def _load(session: Session, as_of: datetime) -> list[PricePoint]:
    # The request's connection and transaction (the view the version was read in, with the
    # request's own writes: reading the version autoflushed them), but an identity map of its
    # own, so the shared objects belong to no request's session. Closing it leaves the
    # request's transaction open.
    with Session(bind=session.connection(),
                 join_transaction_mode="rollback_only") as own:
        points = repository.prices_as_of(own, as_of)
        own.expunge_all()
    return points
