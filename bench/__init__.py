"""Benchmarks (`make bench`): print figures; never assert on time."""
