"""Dashboard speed through the real app (in-process, temporary SQLite): the workspace page, its
htmx fragment, a shared scenario page, and the CSV and XLSX exports at 24 and 120 months."""

import os
import tempfile
from pathlib import Path

from bench.timing import best_of


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATABASE_URL"] = f"sqlite:///{Path(tmp) / 'bench.db'}"
        from fastapi.testclient import TestClient

        from app.main import create_app
        from app.settings import get_settings

        get_settings.cache_clear()
        with TestClient(create_app()) as client:
            hx = {"HX-Request": "true"}
            for months in (24, 120):
                q = {"nodes": 8, "months": months, "utilization": 0.5, "as_of": "2026-11-30"}
                made = client.post("/api/v1/scenarios", json={"name": "bench", "inputs": q})
                share = made.json()["share_id"]
                figures = {
                    "workspace page": lambda q=q: client.get("/", params=q),
                    "htmx results fragment": lambda q=q: client.get("/", params=q, headers=hx),
                    "shared page /s/<id>": lambda s=share: client.get(f"/s/{s}"),
                    "CSV export": lambda s=share: client.get(f"/s/{s}/export.csv"),
                    "XLSX export": lambda s=share: client.get(f"/s/{s}/export.xlsx"),
                }
                for label, fn in figures.items():
                    ms = best_of(fn, repeat=5, number=3) * 1e3
                    print(f"{label}, {months} months: {ms:.1f} ms")
        os.environ.pop("DATABASE_URL")
        get_settings.cache_clear()
