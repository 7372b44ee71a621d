"""Where the non-price defaults of `Assumptions` come from, and their low–high ranges for the
sensitivity table (inputs without a range here or in the pricing store move ±20%).

Prices themselves come from the pricing store (pricing_data/README.md gives their sources).
"""

# Cluster shape defaults (sources below); the planner imports them too.
GPUS_PER_NODE = 8
NICS_PER_NODE = 8
SWITCH_RADIX = 64

SOURCES: dict[str, str] = {
    "nics_per_node": "NVIDIA DGX SuperPOD reference architecture: one 400 Gb/s compute port per "
                     "GPU (rail-optimised), 8 per DGX H100/H200",
    "switch_radix": "NVIDIA Quantum-2 QM9700/QM9790 datasheet: 64 NDR 400 Gb/s ports",
    "oversubscription": "1:1 non-blocking, as in seed 000's recommendation",
    "nodes_per_rack": "clustertco estimate: ~40 kW air/liquid-assisted racks hold four "
                      "10.2 kW HGX nodes",
    "installation_fraction": "clustertco estimate: racking, cabling, burn-in ≈ 2–5% of hardware",
    "spares_fraction": "clustertco estimate: cold spares (GPU boards, PSUs, optics) ≈ 1–3% of "
                       "GPU + server capex",
    "support_fraction_per_year": "clustertco estimate: vendor hardware support contracts "
                                 "≈ 5–12% of hardware capex per year",
    "nodes_per_fte": "clustertco estimate: one operations engineer per 64 nodes, at least one "
                     "(seed 000 staffs 8 nodes with one person)",
    "resale_decline_per_year": "clustertco estimate: secondary-market value of data-centre GPU "
                               "servers falls 20–50% a year; 1.0 means no resale",
    "depreciation_months": "IRS Publication 946: computers are 5-year MACRS property",
    "discount_rate_annual": "clustertco estimate of a technology company's cost of capital "
                            "(5–12%)",
    "colo_usd_per_kw_month": "CBRE North America Data Center Trends H2 2024 (2025-02-26): "
                             "average asking rate $184.06/kW-month for 250–500 kW in primary "
                             "markets; power billed separately at the utility rate",
    "colo_contracted_headroom": "clustertco estimate: contracted kW 10% above peak IT draw",
    "spot_interruptions_per_hour": "seed 001: spot instances 'get preempted every 4-6 hours' "
                                   "(0.17–0.25 per hour; default 1/5)",
    "spot_checkpoint_interval_hours": "clustertco estimate: hourly checkpoints",
    "spot_restart_hours": "seed 001: 20 minutes to save and reload (90 s with sharded async "
                          "checkpoints)",
    "cloud_storage_usd_per_tb_month": "Amazon S3 pricing, Standard, first 50 TB: $0.023/GB-month",
    "egress_usd_per_tb": "Amazon EC2 data transfer out to the internet, first 10 TB/month: "
                         "$0.09/GB",
}

# Sensitivity ranges (low, high) keyed as in the tornado table: "buy.<field>", "rent.<field>".
RANGES: dict[str, tuple[float, float]] = {
    "buy.resale_decline_per_year": (0.20, 0.50),
    "buy.installation_fraction": (0.02, 0.05),
    "buy.spares_fraction": (0.01, 0.03),
    "buy.support_fraction_per_year": (0.05, 0.12),
}

# CBRE H2 2024 asking rate: what the seed examples post as their colocation quote. The service
# itself never falls back to it: without a store row or a request price, colocation is omitted.
CBRE_COLO_USD_PER_KW_MONTH_H2_2024 = 184.06
