"""The load generator only targets a gateway on this machine, so a load test can never flood a shared
or production service by mistake."""
from __future__ import annotations

from urllib.parse import urlsplit

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_base(url: str) -> str:
    """The gateway's base URL (without a trailing `/v1`), or ValueError saying why it is refused."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"refusing '{url}': give an http:// or https:// URL of a gateway on this machine")
    if (parts.hostname or "").lower() not in LOOPBACK:
        raise ValueError(f"refusing '{url}': the load generator only targets loopback addresses "
                         f"({', '.join(LOOPBACK)}), so a load test never floods a shared or production service")
    base = url.rstrip("/")
    return base.removesuffix("/v1")
