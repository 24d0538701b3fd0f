"""Pure decisions of the gateway, no I/O: routing, thresholds, admission, eviction."""
