"""The examples gallery: saved scenarios seeded at start-up from these definitions.

Share ids of examples are readable and fixed (`example-...`) instead of random: examples are
public by design, so unguessability buys nothing, while a fixed id keeps the gallery, the docs
and bookmarks pointing at the same scenario on every database and deployment. A definition's
inputs are never edited once shipped (saved scenarios are immutable): change one by adding a
new id. User scenarios always get 128-bit random ids (`service.new_share_id`).

Cost examples reuse the TCO engine's worked examples (app/tco/examples.py) rather than restate
their inputs. Every priced example pins its pricing date, so its numbers do not drift as prices
are refreshed. Each says in one line what the seed article claimed (`claim`) and what the app
computes from the same inputs (`computes`).
"""

from dataclasses import dataclass
from datetime import date

from app.planner.schemas import PlanRequest
from app.scenarios.schemas import ScenarioInputs
from app.tco.examples import EXAMPLES as TCO_EXAMPLES
from app.tco.schemas import TcoRequest
from app.throughput.schemas import KvCacheRequest, ModelInput, ThroughputRequest

SNAPSHOT_DAY = date(2026, 11, 30)  # the latest effective date in pricing_data/ when written
HOURS_8_BY_5 = 8 * 5 / (24 * 7)  # 40 of 168 hours a week ≈ 0.238
# Seed 001: "512 GPUs … average time between failures: 4.7 hours. Each failure cost 20 minutes
# for checkpoint save and reload": 1 / (4.7 h × 512 GPUs) failures per GPU-hour.
SEED_001_FAILURES_PER_GPU_HOUR = 1 / (4.7 * 512)
SEED_001_RESTART_S = 20 * 60


@dataclass(frozen=True)
class Example:
    share_id: str
    name: str
    claim: str  # what the article says, in one line
    computes: str  # what the app computes from the same inputs, in one line
    inputs: ScenarioInputs

    @property
    def kind(self) -> str:
        return {TcoRequest: "tco", ThroughputRequest: "throughput", PlanRequest: "plan",
                KvCacheRequest: "kv_cache"}[type(self.inputs)]


OPTION_WORDS = {"aws_on_demand": "on AWS on demand", "colo": "colocated"}


def _money(usd: float) -> str:
    return f"${usd / 1e6:,.3g}M" if usd >= 1e6 else f"${usd / 1e3:,.0f}K"


def _cloud_vs_colo(gpus: int, gpu: str) -> Example:
    tco = TCO_EXAMPLES[f"seed001-{gpus}x{gpu.lower()}-cloud-vs-colo"]
    claims = " vs ".join(f"{_money(c.article_usd)} a month {OPTION_WORDS[c.option]}"
                         for c in tco.claims)
    return Example(
        f"example-seed001-{gpus}x{gpu.lower()}-cloud-vs-colo",
        f"Seed 001: {gpus}× {gpu}, cloud vs colocation",
        f"The article's table: {claims}.",
        "Every way to pay at 24/7 for 36 months; the average month is the total ÷ 36.",
        tco.request)


EXAMPLES: tuple[Example, ...] = (
    Example(
        "example-seed000-64gpu-24x7",
        "Seed 000: 64 GPUs, rent vs buy, 24/7 for 2 years",
        "Owning 64 GPUs costs ~$2.6M over two years, 5–10% below AWS reserved.",
        "H100 on both sides (AWS had no H200 on-demand price in the snapshot) at store prices.",
        TcoRequest(nodes=8, gpu_model="H100", months=24, utilization=1.0, as_of=SNAPSHOT_DAY),
    ),
    Example(
        "example-seed000-64gpu-8x5",
        "Seed 000: the same 64 GPUs, used 8 h × 5 days a week",
        "AWS reserved for 8 h × 5 days for two years costs about $65K.",
        "40 of 168 hours a week ≈ 24%; a reservation is billed for every hour of its term.",
        TcoRequest(nodes=8, gpu_model="H100", months=24, utilization=HOURS_8_BY_5,
                   as_of=SNAPSHOT_DAY),
    ),
    Example(
        "example-seed000-64gpu-40pct",
        "Seed 000: is 40% utilization the break-even?",
        "AWS wins below 40% utilization; owning wins above.",
        "Every option at exactly 40%, and the solved break-even utilization of each pair.",
        TcoRequest(nodes=8, gpu_model="H100", months=24, utilization=0.4, as_of=SNAPSHOT_DAY),
    ),
    _cloud_vs_colo(8, "H100"),
    _cloud_vs_colo(64, "H100"),
    _cloud_vs_colo(256, "H100"),
    _cloud_vs_colo(512, "B200"),
    Example(
        "example-seed001-256gpu-48h-plan",
        "Seed 001: 256 H100s, a 90B model in a 48-hour window, $500K a month",
        "256 H100s on NDR InfiniBand train the model in the window for $487K a month.",
        "The cheapest cluster and way of paying that meets the deadline and the budget.",
        PlanRequest(as_of=SNAPSHOT_DAY),
    ),
    Example(
        "example-seed001-70b-64gpu-interconnect",
        "Seed 001: a 70B model on 64 GPUs — InfiniBand vs RoCE vs 100 GbE",
        "Use InfiniBand above 30B parameters; on 100 GbE GPU utilization drops to 30–50%.",
        "Step time and MFU on NDR InfiniBand; the scaling chart sets untuned RoCE and 100 GbE "
        "beside it at every node count.",
        ThroughputRequest(model=ModelInput(preset="llama3-70b"), gpu="H100 SXM 80GB", nodes=8,
                          scale_out_fabric="InfiniBand NDR",
                          scaling_fabrics=["InfiniBand NDR", "RoCEv2 untuned",
                                           "Ethernet TCP 100G"],
                          scaling_nodes=[1, 2, 4, 8, 16, 32, 64]),
    ),
    Example(
        "example-seed001-512gpu-failures",
        "Seed 001: 512 GPUs fail every 4.7 hours",
        "A 512-GPU job failed every 4.7 h on average, each failure costing 20 minutes.",
        "Goodput with that failure rate and restart time, at the Young/Daly checkpoint "
        "interval.",
        ThroughputRequest(model=ModelInput(preset="llama3-70b"), gpu="H100 SXM 80GB",
                          nodes=64, failures_per_gpu_hour=SEED_001_FAILURES_PER_GPU_HOUR,
                          restart_s=SEED_001_RESTART_S),
    ),
    Example(
        "example-seed000-1m-context-kv",
        "Seed 000: a 1M-token context on a 7B model",
        "The KV cache of a 1M-token context for a 7B model needs ~120 GB: more than one GPU.",
        "KV-cache bytes for Llama 2 7B (32 layers, 4,096 hidden, FP16) and the H200s needed.",
        KvCacheRequest(),
    ),
)
