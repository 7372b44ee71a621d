"""Throughput model: how fast a cluster trains a dense decoder, tied to its interconnect."""
