"""Jinja2 templates with block rendering, so one view serves the full page or an htmx fragment."""

from pathlib import Path

from jinja2_fragments.fastapi import Jinja2Blocks

from app.scenarios.report import comparison, fmt

ROOT = Path(__file__).resolve().parents[2]
templates = Jinja2Blocks(directory=str(ROOT / "templates"))


def usd(value: float) -> str:
    """$1,234,567 — whole dollars for totals a finance reader scans."""
    return f"${value:,.0f}"


def usd_cents(value: float | None) -> str:
    return "—" if value is None else f"${value:,.2f}"


def amount(value: float) -> str:
    """A price as recorded: up to 4 decimals, trailing zeros dropped ($55.04, 0.3, 25,000)."""
    return f"{value:,.4f}".rstrip("0").rstrip(".")


templates.env.filters["usd"] = usd
templates.env.filters["usd_cents"] = usd_cents
templates.env.filters["amount"] = amount
templates.env.filters["fmt"] = fmt
templates.env.globals["comparison"] = comparison
