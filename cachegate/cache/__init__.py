"""The cache tiers: exact answers (`exact`, keyed by `keys`), curated answers (`curated/`), the semantic tier
(`semantic/`), single-flight for identical misses (`singleflight`), the cached answer itself (`answer`) and the
client's cache controls (`controls`)."""
