"""mark the snapshot's B200 market observation (data only, no schema change)

The snapshot row "B200 spot (lowest seen, specialised clouds)" is a statistic over several
clouds, not an offer; it now carries `category = market_observation` so no TCO or planner option
is priced from it (pricing_data/README.md, "Market observations"). `category` is part of the
item's natural key, so a store that loaded the earlier snapshot holds the row under its old key,
unmarked: the next snapshot load would add a marked twin and leave the old item in force, still
priced as an option. This marks the old item and moves it to the new key, keeping its history.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | Sequence[str] | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MARKET_OBSERVATION = 'market_observation'  # app.pricing.models.MARKET_OBSERVATION, frozen here
OLD_KEY = 'gpu_cloud/specialised-clouds/global/B200/spot'
NEW_KEY = f'{OLD_KEY}/{MARKET_OBSERVATION}'


def _move(old_key: str, new_key: str, category: str | None) -> None:
    bind = op.get_bind()
    # Marked (or unmarked) in any case; re-keyed unless the new key was already created (a
    # snapshot loaded before upgrading), where the old item keeps its key but is still marked.
    bind.execute(sa.text("UPDATE price_item SET category = :category WHERE item_key = :old"),
                 {"category": category, "old": old_key})
    bind.execute(sa.text(
        "UPDATE price_item SET item_key = :new WHERE item_key = :old AND NOT EXISTS "
        "(SELECT 1 FROM price_item AS taken WHERE taken.item_key = :new)"),
        {"old": old_key, "new": new_key})


def upgrade() -> None:
    _move(OLD_KEY, NEW_KEY, MARKET_OBSERVATION)


def downgrade() -> None:
    _move(NEW_KEY, OLD_KEY, None)
