"""`require_scope`: the FastAPI dependency every write route declares."""

from collections.abc import Callable
from typing import Any

from fastapi import Depends, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.auth import service
from app.auth.models import ApiKey
from app.db import DbSession

bearer = HTTPBearer(auto_error=False, description="An API key from `clustertco keys create`")


def require_scope(scope: str) -> Any:
    """`key: ApiKey = require_scope("prices:write")` in a route's signature."""
    if scope not in service.SCOPES:
        raise ValueError(f"unknown scope {scope!r}")

    def check(credentials: HTTPAuthorizationCredentials | None = Security(bearer),
              session: Session = DbSession) -> ApiKey:
        token = credentials.credentials if credentials else None
        return service.authenticate(session, token, scope)

    check.required_scope = scope  # type: ignore[attr-defined]  # read by the auth tests
    dependency: Callable[..., ApiKey] = check
    return Depends(dependency)
