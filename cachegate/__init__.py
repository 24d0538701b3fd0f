"""cachegate: an OpenAI-compatible caching gateway in front of LLM backends (exact and semantic tiers)."""
__version__ = "0.1.0"
