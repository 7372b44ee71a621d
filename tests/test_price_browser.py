"""Price browser page, CSV export and JSON API over the real app and the loaded snapshot."""

import csv
import io

import pytest
from fastapi.testclient import TestClient

from app.pricing.service import effective_hourly

P5_OD = {"kind": "cloud_instance", "instance_type": "p5.48xlarge", "region": "us-east-1",
         "purchase_option": "on_demand"}


def _items(client: TestClient, **params: object) -> list[dict[str, object]]:
    r = client.get("/api/v1/prices", params=params)
    assert r.status_code == 200, r.text
    items: list[dict[str, object]] = r.json()["items"]
    return items


def test_api_as_of_before_and_after_a_recorded_change(client: TestClient) -> None:
    before = _items(client, **P5_OD, as_of="2025-05-31")
    after = _items(client, **P5_OD, as_of="2025-06-01")
    assert [i["amount"] for i in before] == [98.32]
    assert [i["amount"] for i in after] == [55.04]
    assert before[0]["item_id"] == after[0]["item_id"]  # one item, two dated points
    # $/GPU-hour: $55.04 per 8-GPU instance-hour / 8 = $6.88
    assert after[0]["usd_per_gpu_hour"] == pytest.approx(6.88)
    assert after[0]["source"]
    assert str(after[0]["effective_from"]).startswith("2025-06-01")


def test_history_lists_every_point_oldest_first(client: TestClient) -> None:
    item_id = _items(client, **P5_OD)[0]["item_id"]
    r = client.get(f"/api/v1/prices/{item_id}/history")
    assert r.status_code == 200
    points = r.json()["points"]
    assert [p["amount"] for p in points[:2]] == [98.32, 55.04]
    assert points[0]["effective_to"] == points[1]["effective_from"]
    assert client.get("/api/v1/prices/999999/history").status_code == 404


def test_effective_reserved_hourly_spreads_the_upfront_fee() -> None:
    # 1-year partial upfront: $10/h + $43,800 upfront over 12 × 730 = 8,760 h → $15/h
    assert effective_hourly(10.0, 43_800.0, 12) == pytest.approx(15.0)
    # 3-year all upfront: $0/h + $262,800 over 36 × 730 = 26,280 h → $10/h
    assert effective_hourly(0.0, 262_800.0, 36) == pytest.approx(10.0)
    assert effective_hourly(7.0, None, None) == 7.0


def test_api_effective_hourly_matches_its_formula(client: TestClient) -> None:
    rows = [i for i in _items(client, purchase_option="reserved", provider="aws", limit=1000)
            if i["upfront_usd"]]
    assert rows, "the snapshot has reserved rows with an upfront fee"
    for r in rows:
        expected = r["amount"] + r["upfront_usd"] / (r["term_months"] * 730)  # type: ignore[operator]
        assert r["effective_usd_per_hour"] == pytest.approx(expected)


def test_api_filters_sort_and_pages(client: TestClient) -> None:
    page = client.get("/api/v1/prices", params={"kind": "cloud_instance", "sort": "amount",
                                                "order": "desc", "limit": 3}).json()
    amounts = [i["amount"] for i in page["items"]]
    assert amounts == sorted(amounts, reverse=True)
    assert len(amounts) == 3
    assert page["total"] > 3
    nxt = client.get("/api/v1/prices", params={"kind": "cloud_instance", "sort": "amount",
                                               "order": "desc", "limit": 3, "offset": 3}).json()
    assert nxt["items"][0]["amount"] <= amounts[-1]
    assert {i["kind"] for i in page["items"]} == {"cloud_instance"}


def test_api_pages_cover_the_list_once_in_order(client: TestClient) -> None:
    # Paging by 7 gives the same rows, in the same order, as one page of 1,000; sorting by
    # provider has many ties, which the item key breaks.
    query = {"as_of": "2026-11-30", "sort": "provider", "order": "desc"}
    whole = client.get("/api/v1/prices", params={**query, "limit": 1000}).json()
    assert 7 < whole["total"] == len(whole["items"]) <= 1000
    paged: list[int] = []
    for offset in range(0, whole["total"], 7):
        page = client.get("/api/v1/prices",
                          params={**query, "limit": 7, "offset": offset}).json()
        assert (page["total"], page["limit"], page["offset"]) == (whole["total"], 7, offset)
        paged += [i["item_id"] for i in page["items"]]
    assert paged == [i["item_id"] for i in whole["items"]]


@pytest.mark.parametrize(("params", "field"), [
    ({"kind": "banana"}, "kind"), ({"purchase_option": "free"}, "purchase_option"),
    ({"as_of": "yesterday"}, "as_of"), ({"limit": 0}, "limit"), ({"limit": 5000}, "limit"),
    ({"offset": -1}, "offset"), ({"sort": "colour"}, "sort"), ({"region": "<script>"}, "region"),
    ({"gpu": "H100"}, "gpu"),
])
def test_bad_filter_is_a_422_naming_the_field(client: TestClient, params: dict[str, object],
                                              field: str) -> None:
    for url in ("/api/v1/prices", "/prices.csv"):
        r = client.get(url, params=params)
        assert r.status_code == 422, url
        assert r.headers["content-type"].startswith("application/problem+json")
        assert field in [e["field"] for e in r.json()["errors"]], url
    page = client.get("/prices", params=params)
    assert page.status_code == 422
    assert field in page.text


def test_page_renders_filters_and_sorts(client: TestClient) -> None:
    r = client.get("/prices", params={"kind": "cloud_instance", "gpu_model": "H100",
                                      "sort": "usd_per_gpu_hour", "order": "asc"})
    assert r.status_code == 200
    html = r.text
    assert 'href="/prices"' in html  # nav link from base.html
    assert "p5.48xlarge on-demand" in html
    assert "NVIDIA H100 SXM GPU" not in html  # equipment filtered out
    assert 'aria-sort="ascending"' in html
    assert "/prices.csv?kind=cloud_instance&amp;gpu_model=H100" in html
    # Rows come sorted by $/GPU-hour.
    cells = [c.split('"')[0] for c in html.split('data-gpu-hour="')[1:]]
    values = [float(c) for c in cells if c]
    assert values == sorted(values)
    assert len(values) > 3


def test_page_as_htmx_fragment(client: TestClient) -> None:
    r = client.get("/prices", params={"kind": "equipment"}, headers={"HX-Request": "true"})
    assert r.status_code == 200
    assert "<html" not in r.text
    assert "NVIDIA H100 SXM GPU" in r.text


def test_csv_export_has_the_same_rows_as_the_api(client: TestClient) -> None:
    params = {"kind": "equipment", "as_of": "2026-11-30"}
    r = client.get("/prices.csv", params=params)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(r.text)))
    api = client.get("/api/v1/prices", params={**params, "limit": 1000}).json()
    assert [row["item_key"] for row in rows] == [i["item_key"] for i in api["items"]]
    assert all(row["source"] and row["effective_from"] for row in rows)
    h100 = next(row for row in rows if row["gpu_model"] == "H100" and row["category"] == "gpu")
    assert float(h100["amount"]) > 0
