"""What the gateway measures about itself: Prometheus metrics, per-minute series, the entry ledger."""
