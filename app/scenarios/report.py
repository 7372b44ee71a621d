"""The comparison report shared by the pages and the exports: one table of key figures per
option, the monthly cash flows, and the CSV and XLSX files built from them.

Columns are data: a figure listed in `COLUMNS` is on the page and in both exports.
"""

import csv
import io
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from app.tco.schemas import OptionResult, TcoResponse

Number = float | None


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    fmt: str  # "usd" whole dollars, "usd_cents", "pct"
    anchor: str  # /methodology#anchor explaining the figure
    value: Callable[[OptionResult, TcoResponse], Number]


def _cheapest_total(result: TcoResponse) -> float:
    return min(o.total_usd for o in result.options)


def _break_even_vs_cheapest(option: OptionResult, result: TcoResponse) -> Number:
    """The solved break-even utilization between this option and the cheapest option the engine
    solves break-even for (mixed strategies are not: their baseline moves with the profile);
    None when that pair was not solved or the two never cross."""
    solved = {k for b in result.break_even for k in (b.first, b.second)}
    candidates = [o for o in result.options if o.key in solved]
    if not candidates:
        return None
    pair = {option.key, min(candidates, key=lambda o: o.total_usd).key}
    for b in result.break_even:
        if {b.first, b.second} == pair and len(pair) == 2:
            return b.utilization
    return None


COLUMNS: tuple[Column, ...] = (
    Column("total_usd", "Total cost (USD)", "usd", "total",
           lambda o, r: o.total_usd),
    Column("over_cheapest_usd", "More than the cheapest (USD)", "usd", "total",
           lambda o, r: o.total_usd - _cheapest_total(r)),
    Column("npv_usd", "NPV of cost (USD)", "usd", "npv", lambda o, r: o.npv_usd),
    Column("usd_per_gpu_hour_used", "Per used GPU-hour (USD)", "usd_cents", "gpu-hour-used",
           lambda o, r: o.usd_per_gpu_hour_used),
    Column("break_even_vs_cheapest", "Break-even utilization vs the cheapest (not mixed)", "pct",
           "break-even", _break_even_vs_cheapest),
    Column("first_month_usd", "First-month cash out (USD)", "usd", "cash-flows",
           lambda o, r: o.monthly_usd[0]),
    Column("typical_month_usd", "Typical month (USD)", "usd", "cash-flows",
           lambda o, r: statistics.median(o.monthly_usd)),
)


def columns(result: TcoResponse) -> list[Column]:
    return list(COLUMNS)


def fmt(value: Number, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "usd":
        return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"
    if kind == "usd_cents":
        return f"${value:,.2f}"
    return f"{value:.0%}"


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    cheapest: bool
    values: list[Number]


def comparison(result: TcoResponse) -> tuple[list[Column], list[Row]]:
    cols = columns(result)
    rows = [Row(o.key, o.label, o.key == result.cheapest, [c.value(o, result) for c in cols])
            for o in result.options]
    return cols, rows


@dataclass(frozen=True)
class ReportMeta:
    """What the exported file is: its title, where it lives, when it was made."""

    title: str
    link: str
    created_at: datetime | None = None


def input_rows(result: TcoResponse, meta: ReportMeta) -> list[tuple[str, object]]:
    req = result.request
    rows: list[tuple[str, object]] = [
        ("Scenario", meta.title), ("Link", meta.link),
        ("Prices as of", result.as_of.isoformat()),
    ]
    if meta.created_at is not None:
        rows.append(("Saved at (UTC)", meta.created_at.strftime("%Y-%m-%d %H:%M")))
    rows += [("Nodes", req.nodes), ("GPU", req.gpu_model), ("GPUs", result.gpus),
             ("Horizon (months)", req.months), ("Utilization (0-1)", req.utilization),
             ("AWS region", req.region), ("GPU-hours used", result.gpu_hours_used)]
    rows += [(f"Assumption: {k}", v) for k, v in result.assumptions.items()]
    return rows


PRICE_HEADER = ("Item", "Price", "Unit", "Source", "Effective from")


def price_rows(result: TcoResponse) -> list[tuple[str, float, str, str, date | None]]:
    return [(p.name, p.amount, p.unit, p.source, p.effective_from) for p in result.prices_used]


def cash_flow_header(result: TcoResponse) -> list[str]:
    return ["Month", *(f"{o.label} (USD)" for o in result.options),
            *(f"{o.label} cumulative (USD)" for o in result.options)]


def cash_flow_rows(result: TcoResponse) -> list[list[float | int]]:
    return [[m + 1, *(o.monthly_usd[m] for o in result.options),
             *(o.cumulative_usd[m] for o in result.options)]
            for m in range(result.request.months)]


def to_csv(result: TcoResponse, meta: ReportMeta) -> str:
    """One CSV with four sections (comparison, monthly cash flows, inputs, price sources), each
    headed by a `# title` row and separated by a blank row, so it pastes into any spreadsheet."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    cols, rows = comparison(result)
    w.writerow(["# Comparison"])
    w.writerow(["Option", *(c.label for c in cols), "Cheapest"])
    for r in rows:
        w.writerow([r.label, *(_raw(v) for v in r.values), "yes" if r.cheapest else ""])
    w.writerow([])
    w.writerow(["# Monthly cash flows (USD, cash out positive)"])
    w.writerow(cash_flow_header(result))
    w.writerows([_raw(v) for v in row] for row in cash_flow_rows(result))
    w.writerow([])
    w.writerow(["# Inputs"])
    w.writerows(input_rows(result, meta))
    w.writerow([])
    w.writerow(["# Prices used"])
    w.writerow(PRICE_HEADER)
    w.writerows(price_rows(result))
    return out.getvalue()


def _raw(value: Number) -> str:
    """Full precision for a spreadsheet; repr round-trips floats exactly."""
    return "" if value is None else repr(round(value, 6))


XLSX_FORMATS = {"usd": '"$"#,##0', "usd_cents": '"$"#,##0.00', "pct": "0%"}
HEAD_FONT = Font(bold=True)
HEAD_FILL = PatternFill("solid", fgColor="EEF2F6")


def to_xlsx(result: TcoResponse, meta: ReportMeta) -> bytes:
    """Three sheets: Comparison, Monthly cash flows, and Inputs & sources."""
    wb = Workbook()
    ws: Worksheet = wb.active
    ws.title = "Comparison"
    cols, rows = comparison(result)
    ws.append([meta.title])
    ws["A1"].font = Font(bold=True, size=13)
    ws.append([f"Prices as of {result.as_of.isoformat()}; {result.gpus} GPUs, "
               f"{result.request.months} months, utilization {result.request.utilization:.0%}"])
    ws.append([])
    _header(ws, ["Option", *(c.label for c in cols), "Cheapest"])
    for r in rows:
        ws.append([r.label, *r.values, "yes" if r.cheapest else ""])
        for i, c in enumerate(cols, start=2):
            ws.cell(ws.max_row, i).number_format = XLSX_FORMATS[c.fmt]
    _widths(ws, [28, *[20] * len(cols), 10])

    flows = wb.create_sheet("Monthly cash flows")
    _header(flows, cash_flow_header(result))
    for row in cash_flow_rows(result):
        flows.append(row)
        for i in range(2, len(row) + 1):
            flows.cell(flows.max_row, i).number_format = XLSX_FORMATS["usd"]
    flows.freeze_panes = "B2"
    _widths(flows, [8, *[24] * (len(result.options) * 2)])

    info = wb.create_sheet("Inputs & sources")
    _header(info, ["Input", "Value"])
    for pair in input_rows(result, meta):
        info.append(list(pair))
    info.append([])
    _header(info, list(PRICE_HEADER))
    for p in price_rows(result):
        info.append(list(p))
        info.cell(info.max_row, 5).number_format = "yyyy-mm-dd"
    _widths(info, [48, 30, 18, 60, 16])

    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _header(ws: Worksheet, labels: list[str]) -> None:
    ws.append(labels)
    for cell in ws[ws.max_row]:
        cell.font, cell.fill = HEAD_FONT, HEAD_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="top")


def _widths(ws: Worksheet, widths: list[int]) -> None:
    for i, width in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(i)].width = width


ExportFormat = Literal["csv", "xlsx"]
MEDIA_TYPES: dict[str, str] = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


@dataclass(frozen=True)
class ExportFile:
    content: bytes
    media_type: str
    filename: str


def export(result: TcoResponse, meta: ReportMeta, fmt: ExportFormat) -> ExportFile:
    content = to_csv(result, meta).encode() if fmt == "csv" else to_xlsx(result, meta)
    slug = re.sub(r"[^a-z0-9]+", "-", meta.title.lower()).strip("-")[:60] or "scenario"
    return ExportFile(content, MEDIA_TYPES[fmt], f"clustertco-{slug}.{fmt}")
