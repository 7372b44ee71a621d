"""Load the dated, sourced snapshot in `pricing_data/` into the store. Idempotent: a price
already in force is not recorded again, so loading twice adds nothing.

Layout: `sources.csv` (one row per source) and one `prices_*.csv` per kind of price, all with
the same columns (`PRICE_COLUMNS`), so one loader and one test read them all."""

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy.orm import Session

from app.pricing import repository
from app.pricing.models import PriceItem, PriceKind, PriceSource, SourceKind

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "pricing_data"
PRICE_COLUMNS = (
    "kind", "name", "unit", "provider", "region", "availability_zone", "instance_type",
    "gpu_model", "gpu_count", "purchase_option", "term_months", "payment_option",
    "offering_class", "category", "part_number", "power_w", "amount", "upfront_usd", "low",
    "high", "effective_from", "source", "note",
)
INT_COLUMNS = {"gpu_count", "term_months"}


@dataclass(frozen=True)
class LoadReport:
    sources: int
    points_added: int
    points_seen: int


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _money(text: str) -> Decimal | None:
    return Decimal(text) if text.strip() else None


def price_files(directory: Path = SNAPSHOT_DIR) -> list[Path]:
    return sorted(directory.glob("prices_*.csv"))


def price_rows(directory: Path = SNAPSHOT_DIR) -> Iterator[tuple[Path, int, dict[str, str]]]:
    """Every price row of the snapshot with its file and line number (for error messages)."""
    for path in price_files(directory):
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            if tuple(reader.fieldnames or ()) != PRICE_COLUMNS:
                raise ValueError(f"{path.name}: columns must be {','.join(PRICE_COLUMNS)}")
            for line, row in enumerate(reader, start=2):
                yield path, line, row


def item_key(row: dict[str, str]) -> str:
    return repository.item_key(row)


def _item_fields(row: dict[str, str]) -> dict[str, object]:
    fields: dict[str, object] = {"kind": PriceKind(row["kind"]), "name": row["name"],
                                 "unit": row["unit"]}
    for col in (*repository.FILTERABLE[1:], "part_number"):
        value = row.get(col, "").strip()
        if value:
            fields[col] = int(value) if col in INT_COLUMNS else value
    if row.get("power_w", "").strip():
        fields["power_w"] = float(row["power_w"])
    return fields


def _load_sources(session: Session, directory: Path) -> dict[str, PriceSource]:
    sources = {}
    with (directory / "sources.csv").open(newline="") as fh:
        for row in csv.DictReader(fh):
            sources[row["source"]] = repository.get_or_create_source(
                session, name=row["name"], retrieved_at=_when(row["retrieved_at"]),
                kind=SourceKind(row["kind"]), url=row["url"] or None, notes=row["notes"] or None)
    return sources


def load_snapshot(session: Session, directory: Path = SNAPSHOT_DIR) -> LoadReport:
    sources = _load_sources(session, directory)
    added = seen = 0
    for _path, _line, row in price_rows(directory):
        seen += 1
        item: PriceItem = repository.get_or_create_item(
            session, item_key(row), **_item_fields(row))
        source = sources[row["source"]]
        new = repository.NewPrice(
            amount=Decimal(row["amount"]), effective_from=_when(row["effective_from"]),
            retrieved_at=source.retrieved_at, upfront_usd=_money(row["upfront_usd"]),
            low=_money(row["low"]), high=_money(row["high"]), note=row["note"] or None)
        if repository.record_price(session, item, source, new) is not None:
            added += 1
    return LoadReport(len(sources), added, seen)
