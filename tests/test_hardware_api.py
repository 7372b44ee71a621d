"""Hardware catalog API: the GPUs and fabrics are exactly the rows of
pricing_data/hardware/*.csv (read here independently of the loader), with source and date."""

import csv
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from app.ratelimit import service as ratelimit
from app.settings import Settings

DATA = Path(__file__).resolve().parents[1] / "pricing_data" / "hardware"
PROBLEM = "application/problem+json"
TEXT = {"name", "family", "scale_up", "kind", "source", "source_date"}
FLAGS = {"in_network_reduction", "lossless"}


def _csv(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _expected(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row as the API must give it: numbers as numbers, true/false as booleans."""
    return {k: v if k in TEXT else v == "true" if k in FLAGS else float(v)
            for k, v in row.items()}


def test_gpu_list_is_the_csv(client: TestClient) -> None:
    r = client.get("/api/v1/hardware/gpus")
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    rows = _csv("gpus.csv")
    assert [g["name"] for g in items] == [row["name"] for row in rows]  # catalog order
    for got, row in zip(items, rows, strict=True):
        assert got == {**_expected(row), "short_name": row["name"].split()[0]}


def test_h100_figures_carry_units_source_and_date(client: TestClient) -> None:
    # gpus.csv: H100 SXM 80GB,hopper,989,1979,80,3.35,700,NVLink4,450,0.803,<source>,2025-06-01
    r = client.get(f"/api/v1/hardware/gpus/{quote('H100 SXM 80GB')}")
    assert r.status_code == 200, r.text
    h100 = r.json()
    assert h100["peak_bf16_tflops"] == 989
    assert h100["peak_fp8_tflops"] == 1979
    assert h100["hbm_gbytes"] == 80
    assert h100["hbm_tbytes_per_s"] == 3.35
    assert h100["power_w"] == 700
    assert h100["scale_up"] == "NVLink4"
    assert h100["short_name"] == "H100"
    assert h100["source"].startswith("stas00/ml-engineering")
    assert h100["source_date"] == "2025-06-01"


def test_fabric_list_is_the_csv(client: TestClient) -> None:
    r = client.get("/api/v1/hardware/fabrics")
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    rows = _csv("fabrics.csv")
    assert [f["name"] for f in items] == [row["name"] for row in rows]
    for got, row in zip(items, rows, strict=True):
        assert got == _expected(row)
    ndr = next(f for f in items if f["name"] == "InfiniBand NDR")
    assert (ndr["port_gbits_per_s"], ndr["lossless"]) == (400, True)
    one = client.get(f"/api/v1/hardware/fabrics/{quote('InfiniBand NDR')}")
    assert one.status_code == 200
    assert one.json() == ndr


def test_every_gpu_names_a_scale_up_fabric_of_the_catalog(client: TestClient) -> None:
    fabrics = {f["name"] for f in client.get("/api/v1/hardware/fabrics").json()["items"]}
    gpus = client.get("/api/v1/hardware/gpus").json()["items"]
    assert {g["scale_up"] for g in gpus} <= fabrics


@pytest.mark.parametrize(("path", "what"), [
    ("/api/v1/hardware/gpus/H100", "unknown GPU 'H100'"),  # the short name is not a key
    ("/api/v1/hardware/gpus/Z9000", "unknown GPU 'Z9000'"),
    (f"/api/v1/hardware/fabrics/{quote('InfiniBand QDR')}", "unknown fabric 'InfiniBand QDR'"),
])
def test_unknown_name_is_404_problem_listing_the_catalog(client: TestClient, path: str,
                                                        what: str) -> None:
    r = client.get(path)
    assert r.status_code == 404
    assert r.headers["content-type"] == PROBLEM
    body = r.json()
    assert body["status"] == 404
    assert body["title"] == "Not found"
    assert body["instance"].startswith("/api/v1/hardware/")
    assert body["detail"].startswith(what)
    assert "known: " in body["detail"]
    known = "H100 SXM 80GB" if "/gpus/" in path else "InfiniBand NDR"
    assert known in body["detail"]


def test_overlong_or_odd_name_is_422_problem(client: TestClient) -> None:
    for name in ("x" * 65, quote("H100;drop")):
        r = client.get(f"/api/v1/hardware/gpus/{name}")
        assert r.status_code == 422, r.text
        assert r.headers["content-type"] == PROBLEM
        assert r.json()["errors"][0]["field"] == "name"


def test_catalog_reads_are_not_rate_limited(client: TestClient,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # With a limit of one request per hour, a limited route would refuse the second call.
    monkeypatch.setattr(ratelimit, "get_settings",
                        lambda: Settings(rate_limit_requests=1, rate_limit_window_s=3600))
    monkeypatch.setattr(ratelimit, "_windows", {})
    for path in ("/api/v1/hardware/gpus", "/api/v1/hardware/fabrics") * 3:
        assert client.get(path).status_code == 200
