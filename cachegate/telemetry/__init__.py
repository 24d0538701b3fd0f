"""What the gateway measures about itself: one record per request (`recorder`, which reads the pipeline's
`Outcome`), Prometheus metrics, per-minute series (local and fleet-wide in Redis), the in-process counters
(`stats`), prices (`accounting`), the entry ledger and the health view of stores and backends."""
