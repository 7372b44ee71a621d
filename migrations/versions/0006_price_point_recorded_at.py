"""price point recorded_at

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 19:12:05.292323
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.db

revision: str = '0006'
down_revision: str | Sequence[str] | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing points: the best knowledge of when they were learnt is when they were retrieved.
    with op.batch_alter_table('price_point', schema=None) as batch_op:
        batch_op.add_column(sa.Column('recorded_at', app.db.UtcDateTime(timezone=True),
                                      nullable=True))
    op.execute("UPDATE price_point SET recorded_at = retrieved_at")
    with op.batch_alter_table('price_point', schema=None) as batch_op:
        batch_op.alter_column('recorded_at', existing_type=app.db.UtcDateTime(timezone=True),
                              nullable=False)


def downgrade() -> None:
    with op.batch_alter_table('price_point', schema=None) as batch_op:
        batch_op.drop_column('recorded_at')
