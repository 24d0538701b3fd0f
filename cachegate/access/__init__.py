"""Who may ask and how much: API keys to tenants (`auth`), per-key request and token budgets (`ratelimit`)."""
