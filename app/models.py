"""Imports every ORM module so `Base.metadata` knows all tables (used by Alembic)."""

from app.auth import models as auth_models  # noqa: F401
from app.pricing import models as pricing_models  # noqa: F401
from app.ratelimit import models as ratelimit_models  # noqa: F401
from app.scenarios import models as scenario_models  # noqa: F401
