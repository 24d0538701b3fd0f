"""Where cached entries live: the store contract (`base`), memory and Redis stores, the guard that turns a
failing store into a degraded one (`guarded`), and `factory` that opens one by name."""
