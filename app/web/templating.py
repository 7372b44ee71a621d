"""Jinja2 templates with block rendering, so one view serves the full page or an htmx fragment."""

from pathlib import Path

from jinja2_fragments.fastapi import Jinja2Blocks

ROOT = Path(__file__).resolve().parents[2]
templates = Jinja2Blocks(directory=str(ROOT / "templates"))


def usd(value: float) -> str:
    """$1,234,567 — whole dollars for totals a finance reader scans."""
    return f"${value:,.0f}"


def usd_cents(value: float | None) -> str:
    return "—" if value is None else f"${value:,.2f}"


templates.env.filters["usd"] = usd
templates.env.filters["usd_cents"] = usd_cents
