"""The first cut's module name, kept so its importers (planner, pricing, web on main) keep
working after the merge. The month grid lives in money.py; import it from there."""

from app.modelling.finance.money import HOURS_PER_MONTH, HOURS_PER_YEAR

__all__ = ["HOURS_PER_MONTH", "HOURS_PER_YEAR"]
