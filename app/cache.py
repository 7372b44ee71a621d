"""Finished answers kept per process: a computation's JSON or a rendered page, as bytes.

Every priced computation is a pure function of its validated request, the date it resolves
prices for and the price store's content, so an answer is reused only under a key holding all
three: a price write changes the store's version and with it every key (see
`app.pricing.version` for how soon each worker sees it). The cache is memory only, bounded,
and safe to lose: it is not state, workers and hosts still share nothing. Procurement tools
re-ask the same questions and a shared link is opened by many people; a repeated answer is
served from the event loop without a thread hop or a database round trip."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import UTC, datetime

from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.db import session_scope
from app.pricing import version

MAX_BYTES = 64 * 2**20  # per worker

_answers: OrderedDict[Hashable, bytes] = OrderedDict()
_size_bytes = 0
_lock = threading.Lock()


def _lookup(key: Hashable) -> bytes | None:
    with _lock:
        found = _answers.get(key)
        if found is not None:
            _answers.move_to_end(key)
        return found


def remember(key: Hashable, make: Callable[[], bytes]) -> bytes:
    """The bytes cached under `key`, made (outside the lock) and kept if missing."""
    global _size_bytes
    found = _lookup(key)
    if found is not None:
        return found
    made = make()
    with _lock:
        if key not in _answers:
            _answers[key] = made
            _size_bytes += len(made)
        while _size_bytes > MAX_BYTES and _answers:
            _size_bytes -= len(_answers.popitem(last=False)[1])
    return made


def request_key(kind: str, request: BaseModel) -> tuple[Hashable, ...]:
    """A priced request's key without the store version: the request and today's date
    (the default `as_of`)."""
    return kind, request.model_dump_json(), datetime.now(UTC).date()


async def priced(key: tuple[Hashable, ...], make: Callable[[Session], bytes]) -> bytes:
    """The answer under `key` + the store's version; made in a worker thread, with its own
    read-only session, when missing (or when the version is not known recently)."""
    known = version.known()
    if known is not None:
        found = _lookup((*key, known))
        if found is not None:
            return found
    return await run_in_threadpool(_priced_now, key, make)


def _priced_now(key: tuple[Hashable, ...], make: Callable[[Session], bytes]) -> bytes:
    with session_scope() as session:
        return remember((*key, version.current(session)), lambda: make(session))


def json_bytes(model: BaseModel) -> bytes:
    return model.model_dump_json(by_alias=True).encode()
