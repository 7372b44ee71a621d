"""Throughput API and page over real HTTP."""

import pytest
from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_default_request_answers_with_consistent_numbers(client: TestClient) -> None:
    r = client.post("/api/v1/throughput", json={})
    assert r.status_code == 200
    body = r.json()
    step = body["step"]
    parts = sum(v for k, v in step.items() if k != "step_time_s")
    assert parts == pytest.approx(step["step_time_s"])  # the breakdown adds up
    assert body["tokens_per_day"] == pytest.approx(body["tokens_per_s"] * 86_400)
    layout = body["layout"]
    assert layout["tp"] * layout["pp"] * layout["dp"] * layout["cp"] == body["num_gpus"] == 64
    # time to train = tokens / useful tokens per day
    assert body["time_to_train_days"] == pytest.approx(1e12 / body["useful_tokens_per_day"])
    assert {s["fabric"] for s in body["scaling"]} >= {"InfiniBand NDR", "RoCEv2 untuned"}


def test_untuned_roce_is_slower_than_ndr_for_70b_at_64_gpus(client: TestClient) -> None:
    def tokens(fabric: str) -> float:
        r = client.post("/api/v1/throughput", json={
            "model": {"preset": "llama2-70b"}, "nodes": 8, "scale_out_fabric": fabric,
            "scaling_fabrics": [], "scaling_nodes": []})
        assert r.status_code == 200, r.text
        return float(r.json()["tokens_per_s"])

    assert tokens("RoCEv2 untuned") < tokens("InfiniBand NDR")


def test_one_degraded_nvlink_pair_slows_the_job(client: TestClient) -> None:
    def tokens(extra: dict[str, object]) -> float:
        r = client.post("/api/v1/throughput", json={
            "model": {"preset": "llama2-70b"}, "nodes": 16, "scaling_fabrics": [],
            "scaling_nodes": [], "layout": {"tp": 8, "pp": 2, "dp": 8}, **extra})
        assert r.status_code == 200, r.text
        return float(r.json()["tokens_per_s"])

    assert tokens({"degraded_scale_up_gbytes_per_s": 25.0}) < 0.5 * tokens({})


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"layout": {"tp": 3, "pp": 1, "dp": 1}, "nodes": 1, "gpus_per_node": 3}, "layout",
     "does not divide"),
    ({"nodes": 0}, "nodes", "greater than or equal"),
    ({"gpu": "Z100"}, "gpu", "unknown GPU"),
    ({"model": {"preset": "nope"}}, "model", "unknown model preset"),
    ({"model": {"preset": "llama2-70b"}, "nodes": 1, "zero_stage": 0, "recompute": "none",
      "layout": {"tp": 8, "pp": 1, "dp": 1}, "global_batch_seqs": 8}, "layout", "does not fit"),
    ({"gpu": "A100 SXM 80GB", "precision": "fp8"}, "precision", "fp8"),
    ({"oversubscription": 0.5}, "oversubscription", "greater than or equal"),
    ({"degraded_nic_gbps": 0}, "degraded_nic_gbps", "greater than"),
])
def test_invalid_input_is_422_naming_the_reason(client: TestClient, body: dict[str, object],
                                               field: str, words: str) -> None:
    r = client.post("/api/v1/throughput", json={"scaling_fabrics": [], **body})
    assert r.status_code == 422, r.text
    problem = r.json()
    assert any(e["field"].startswith(field) for e in problem["errors"]), problem
    assert words in problem["detail"]


def test_kv_cache_llama2_7b_4k_context(client: TestClient) -> None:
    # 2 (K,V) × 32 layers × 4096 hidden × 2 bytes = 524,288 B/token; × 4,096 tokens = 2 GiB
    r = client.post("/api/v1/kv-cache", json={"model": {"preset": "llama2-7b"},
                                              "context_tokens": 4096})
    assert r.status_code == 200
    assert r.json()["kv_bytes_per_token"] == 2 * 32 * 4096 * 2
    assert r.json()["kv_bytes"] == 2 * 32 * 4096 * 2 * 4096


def test_page_renders_and_fragment_updates(client: TestClient) -> None:
    page = client.get("/throughput")
    assert page.status_code == 200
    assert 'id="scaling-chart"' in page.text
    small = client.get("/throughput", params={"nodes": "4"}, headers=HX)
    big = client.get("/throughput", params={"nodes": "32"}, headers=HX)
    assert "<html" not in small.text
    assert small.text != big.text
    bad = client.get("/throughput", params={"nodes": "-2"})
    assert bad.status_code == 422
    assert "<b>nodes</b>" in bad.text


def test_shape_fields_make_a_custom_model_and_clash_with_a_preset(client: TestClient) -> None:
    shape = {"layers": 40, "hidden": 5120, "ffn": 13824, "heads": 40, "kv_heads": 40,
             "vocab": 32000, "seq_len": 4096}
    custom = client.post("/api/v1/throughput", json={"model": shape, "nodes": 4})
    preset = client.post("/api/v1/throughput", json={"model": {"preset": "llama3-70b"},
                                                     "nodes": 4})
    assert custom.status_code == 200, custom.text
    # 12·L·h² ≈ 12 × 40 × 5120² ≈ 12.6e9 parameters, not the 70B preset's.
    assert custom.json()["params"] < 20e9 < preset.json()["params"]
    both = client.post("/api/v1/throughput", json={"model": {**shape, "preset": "llama3-8b"}})
    assert both.status_code == 422
    assert "not both" in both.text
    partial = client.post("/api/v1/throughput", json={"model": {"layers": 40}})
    assert partial.status_code == 422
    assert "hidden" in partial.text
