"""Workloads, load generators, benchmarks and evaluation scripts; each prints JSON and draws PNG plots."""
