"""Who answers: the backend contract (`base`: the gateway's own request and chunk types), the in-process engine
(`inprocess`, with `structured` for tools and JSON output), engine servers and OpenAI-compatible upstreams
(`upstream`), each replica behind retries and a breaker (`resilience`), replicas pooled per model (`pool`), and
`streams.first_answer`, the one way to wait for a backend's first chunk."""
