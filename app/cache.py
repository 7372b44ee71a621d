"""Finished answers kept per process: a computation's JSON or a rendered page, as bytes.

Every computation here is a pure function of its validated request, the date it resolves
prices for and the price store's content, so an answer is reused only under a key holding all
three (`priced_key`): a price write changes the store's version and with it every key, in
every worker at once, because each request still reads the version from the database. The
cache is memory only, bounded, and safe to lose: it is not state, and workers and hosts still
share nothing. Procurement tools re-ask the same questions and a shared link is opened by
many people, which is what this serves."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import UTC, datetime

from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.pricing.repository import store_version

MAX_BYTES = 64 * 2**20  # per worker

_answers: OrderedDict[Hashable, bytes] = OrderedDict()
_size_bytes = 0
_lock = threading.Lock()


def remember(key: Hashable, make: Callable[[], bytes]) -> bytes:
    """The bytes cached under `key`, made (outside the lock) and kept if missing."""
    global _size_bytes
    with _lock:
        found = _answers.get(key)
        if found is not None:
            _answers.move_to_end(key)
            return found
    made = make()
    with _lock:
        if key not in _answers:
            _answers[key] = made
            _size_bytes += len(made)
        while _size_bytes > MAX_BYTES and _answers:
            _size_bytes -= len(_answers.popitem(last=False)[1])
    return made


def priced_key(session: Session, kind: str, request: BaseModel) -> Hashable:
    """What a priced answer depends on: the request, today's date (the default `as_of`) and
    the store's version."""
    return kind, request.model_dump_json(), datetime.now(UTC).date(), store_version(session)


def json_answer(key: Hashable, make: Callable[[], BaseModel]) -> Response:
    """A JSON response of the model `make` returns, cached under `key`."""
    body = remember(key, lambda: make().model_dump_json(by_alias=True).encode())
    return Response(body, media_type="application/json")


def clear() -> None:
    """Forget every answer (tests that rewrite a database in place)."""
    global _size_bytes
    with _lock:
        _answers.clear()
        _size_bytes = 0
