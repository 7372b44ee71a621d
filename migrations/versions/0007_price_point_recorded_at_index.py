"""index price_point.recorded_at (the store version reads its maximum)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 01:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = '0007'
down_revision: str | Sequence[str] | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_price_point_recorded_at', 'price_point', ['recorded_at'])


def downgrade() -> None:
    op.drop_index('ix_price_point_recorded_at', table_name='price_point')
