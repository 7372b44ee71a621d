"""The examples gallery: saved scenarios seeded at start-up from these definitions.

Share ids of examples are readable and fixed (`example-...`) instead of random: examples are
public by design, so unguessability buys nothing, while a fixed id keeps the gallery, the docs
and bookmarks pointing at the same scenario on every database and deployment. A definition is
never edited once shipped (saved scenarios are immutable): change one by adding a new id.
User scenarios always get 128-bit random ids (`service.new_share_id`).

Every example pins its pricing date, so its numbers do not drift as prices are refreshed.
"""

from dataclasses import dataclass
from datetime import date

from app.tco.schemas import TcoRequest

SNAPSHOT_DAY = date(2026, 11, 30)  # the latest effective date in pricing_data/ when written
HOURS_8_BY_5 = 8 * 5 / (24 * 7)  # 40 of 168 hours a week ≈ 0.238


@dataclass(frozen=True)
class Example:
    share_id: str
    name: str
    description: str
    inputs: TcoRequest


EXAMPLES: tuple[Example, ...] = (
    Example(
        "example-seed000-64gpu-24x7",
        "Seed 000: 64 GPUs, rent vs buy, 24/7 for 2 years",
        "The article's 8-node cluster trained around the clock. H100 on both sides: AWS has no "
        "H200 on-demand price in the snapshot, so the bought cluster is priced as H100 too.",
        TcoRequest(nodes=8, gpu_model="H100", months=24, utilization=1.0, as_of=SNAPSHOT_DAY),
    ),
    Example(
        "example-seed000-64gpu-8x5",
        "Seed 000: the same 64 GPUs, used 8 h × 5 days a week",
        "The article's intermittent case (40 of 168 hours a week ≈ 24%). Note the reservation "
        "is billed for every hour of its term, used or not.",
        TcoRequest(nodes=8, gpu_model="H100", months=24, utilization=HOURS_8_BY_5,
                   as_of=SNAPSHOT_DAY),
    ),
    Example(
        "example-seed000-64gpu-40pct",
        "Seed 000: is 40% utilization the break-even?",
        "The article claims AWS wins below 40% utilization. Check it at exactly 40%.",
        TcoRequest(nodes=8, gpu_model="H100", months=24, utilization=0.4, as_of=SNAPSHOT_DAY),
    ),
)
