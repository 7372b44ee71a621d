"""The price store's version as this process knows it: what cached answers and price books
are keyed by (`app.cache`, `app.pricing.book`).

Reading the version costs a database round trip, which dominated a cached answer, so a
process re-reads it at most every `TTL_S`. Its own price writes are seen at once (a commit
that wrote prices forgets the known version); another worker's or host's within `TTL_S`. A
session that has written prices but not committed reads its own version, so it sees its own
writes."""

import threading
import time
from itertools import chain

from sqlalchemy import event
from sqlalchemy.orm import Session

from app.db import get_engine
from app.pricing import repository
from app.pricing.models import PricePoint

TTL_S = 1.0
WROTE_PRICES = "clustertco.wrote_prices"

_clock = time.monotonic  # a seam for tests
_known: dict[str, tuple[tuple[object, ...], float]] = {}  # engine URL -> (version, read at)
_lock = threading.Lock()


def known(url: str | None = None) -> tuple[object, ...] | None:
    """The version read less than `TTL_S` ago for the database at `url` (default: the
    configured one), or None: then ask `current` (which needs the database)."""
    key = str(get_engine(url).url)
    with _lock:
        found = _known.get(key)
    if found is None or _clock() - found[1] >= TTL_S:
        return None
    return found[0]


def current(session: Session) -> tuple[object, ...]:
    """The version `session` sees, read from the database when not known recently."""
    if session.info.get(WROTE_PRICES):
        return repository.store_version(session)  # includes its uncommitted writes
    url = str(session.get_bind().engine.url)
    found = known(url)
    if found is None:
        found = repository.store_version(session)
        with _lock:
            _known[url] = (found, _clock())
    return found


@event.listens_for(Session, "after_flush")
def _note_price_writes(session: Session, _context: object) -> None:
    # Still the pre-flush lists here: what this flush wrote.
    if any(isinstance(o, PricePoint) for o in chain(session.new, session.dirty)):
        session.info[WROTE_PRICES] = True


@event.listens_for(Session, "after_commit")
def _forget_after_price_commit(session: Session) -> None:
    if session.info.pop(WROTE_PRICES, False):
        with _lock:
            _known.clear()


@event.listens_for(Session, "after_rollback")
def _nothing_written(session: Session) -> None:
    session.info.pop(WROTE_PRICES, None)
