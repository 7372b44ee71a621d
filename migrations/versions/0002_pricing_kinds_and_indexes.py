"""pricing: part numbers, lookup indexes, point integrity checks

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 18:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0002'
down_revision: str | Sequence[str] | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('price_item', schema=None) as batch_op:
        batch_op.add_column(sa.Column('part_number', sa.String(length=64), nullable=True))
        batch_op.create_index('ix_price_item_kind_category', ['kind', 'category'], unique=False)
        batch_op.create_index('ix_price_item_kind_provider_region',
                              ['kind', 'provider', 'region', 'instance_type', 'purchase_option'],
                              unique=False)
    with op.batch_alter_table('price_point', schema=None) as batch_op:
        batch_op.create_index('ix_price_point_source_id', ['source_id'], unique=False)
        batch_op.create_check_constraint('amount_not_negative', 'amount >= 0')
        batch_op.create_check_constraint(
            'interval_not_empty', 'effective_to IS NULL OR effective_to > effective_from')


def downgrade() -> None:
    with op.batch_alter_table('price_point', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_price_point_interval_not_empty'), type_='check')
        batch_op.drop_constraint(op.f('ck_price_point_amount_not_negative'), type_='check')
        batch_op.drop_index('ix_price_point_source_id')
    with op.batch_alter_table('price_item', schema=None) as batch_op:
        batch_op.drop_index('ix_price_item_kind_provider_region')
        batch_op.drop_index('ix_price_item_kind_category')
        batch_op.drop_column('part_number')
