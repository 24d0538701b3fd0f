"""Triton kernels for the engine's GPU path: K/V store, extend (prefill over a paged prefix) and
split-KV paged decode. Importing this package imports nothing heavy; each module needs `triton`.
"""
