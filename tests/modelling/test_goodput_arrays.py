"""failures.useful_fractions (one numpy call over many jobs) equals the scalar goodput."""

import itertools

import numpy as np
import pytest

from app.modelling.throughput import FailureConfig, goodput
from app.modelling.throughput.failures import useful_fractions


@pytest.mark.parametrize("async_checkpoint", [True, False])
def test_array_call_equals_the_scalar_model_job_by_job(async_checkpoint: bool) -> None:
    # rates from near-perfect hardware to one failure every 12 minutes per GPU (so that both
    # Daly branches, delta < 2M and delta >= 2M, and the clamp to 0 are exercised)
    grid = list(itertools.product([1.0, 8.0, 256.0, 16_384.0, 1e6], [1e-6, 2e-5, 0.03, 5.0]))
    gpus = np.array([g for g, _ in grid])
    rate = np.array([r for _, r in grid])
    for params in (1e9, 90e9, 405e9):
        cfg = FailureConfig(async_checkpoint=async_checkpoint)
        got = useful_fractions(params, gpus, rate, cfg)
        want = [goodput(params, int(g), FailureConfig(failures_per_gpu_hour=r,
                                                      async_checkpoint=async_checkpoint))
                .useful_fraction for g, r in grid]
        assert got.tolist() == want
    assert 0.0 in want  # the clamp was reached
    assert 0.0 < max(want) < 1.0


def test_no_gpus_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one GPU"):
        useful_fractions(1e9, np.array([8.0, 0.0]), 2e-5, FailureConfig())
