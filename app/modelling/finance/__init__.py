"""Finance model: what each way of paying for a GPU cluster costs, month by month.

Pure (stdlib + numpy), vectorized. Where to look:
- money.py       month grid (730 h), discounting convention, NPV, cumulative, payback month
- profiles.py    utilization profiles: constant, schedule (h/day × days/week), monthly series
- network.py     fabric bill of materials (switches, NICs, cables, transceivers) from nodes
- options.py     Owned (buy; owned facility or colocation) and Rental (on-demand, spot,
                 capacity blocks, reserved, savings plans, GPU clouds) monthly flows
- mixed.py       own/reserve a baseline, rent the peak; cost-minimising baseline
- compare.py     all options side by side, break-even utilization (analytic), sweeps
- sensitivity.py tornado table and Monte Carlo on the buy-vs-rent difference
"""
