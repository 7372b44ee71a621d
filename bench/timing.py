"""Tiny timing helper shared by the benchmarks."""

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 7, number: int = 1) -> float:
    """Best wall time of `repeat` runs of `number` calls, in seconds per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best
