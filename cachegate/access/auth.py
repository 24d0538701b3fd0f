"""API keys → tenants. Keys come from the config (in clear or as SHA-256) and, when enabled, from
Redis (`<prefix>apikey:<sha256>` hashes written by `cachegate keys add`). With no keys configured the
gateway is open and every request is the tenant `default`; with keys, a request without a valid one
gets 401 before any work. Keys are only ever held, compared and logged as their SHA-256. What Redis said
about a key is remembered for `cache_s`, in a bounded LRU (`cache_entries`), so a flood of bogus keys
cannot grow memory. A key marked `trusted_gateway` (a gateway's key to an engine server) may name the
tenant it serves a request for."""
from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from cachegate.errors import BackendUnavailable, Unauthorized
from cachegate.settings import AuthSettings

log = logging.getLogger(__name__)
OPEN_TENANT = "default"


@dataclass(frozen=True)
class Principal:
    tenant: str
    key_id: str                                  # first 16 hex of the key's SHA-256 ("" when open)
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    trusted_gateway: bool = False                # may name the tenant (x-cachegate-tenant)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class KeyRing:
    def __init__(self, settings: AuthSettings, redis: Redis | None = None, prefix: str = "cachegate:") -> None:
        self.settings = settings
        self.redis = redis if settings.redis_keys else None
        self.prefix = prefix
        self.static: dict[str, Principal] = {}
        for k in settings.keys:
            sha = k.key_sha256 or digest(k.key.get_secret_value())
            self.static[sha] = self._principal(k.tenant, sha, k.requests_per_minute, k.tokens_per_minute,
                                               k.trusted_gateway)
        self.remembered: OrderedDict[str, tuple[float, Principal | None]] = OrderedDict()

    @property
    def open(self) -> bool:
        return not self.static and self.redis is None

    async def authenticate(self, authorization: str | None) -> Principal:
        if self.open:
            return self._principal(OPEN_TENANT, "", None, None)
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise Unauthorized("You didn't provide an API key. Send it as 'Authorization: Bearer <key>'.")
        sha = digest(key.strip())
        principal = self._static(sha) or await self._from_redis(sha)
        if principal is None:
            raise Unauthorized()
        return principal

    def _static(self, sha: str) -> Principal | None:
        for known, principal in self.static.items():
            if hmac.compare_digest(known, sha):
                return principal
        return None

    async def _from_redis(self, sha: str) -> Principal | None:
        if self.redis is None:
            return None
        cached = self.remembered.get(sha)
        if cached is not None and time.monotonic() - cached[0] < self.settings.cache_s:
            self.remembered.move_to_end(sha)
            return cached[1]
        try:
            row = await self.redis.hgetall(f"{self.prefix}apikey:{sha}")
        except (RedisError, OSError) as exc:
            if cached is not None:               # Redis down: a key seen before still works
                return cached[1]
            log.warning("API key lookup in redis failed: %s", exc)
            raise BackendUnavailable("API keys cannot be checked right now; retry shortly") from exc
        fields = {k.decode(): v.decode() for k, v in row.items()}
        principal = None
        if fields.get("tenant"):
            principal = self._principal(fields["tenant"], sha, _int(fields.get("requests_per_minute")),
                                        _int(fields.get("tokens_per_minute")))
        self._remember(sha, principal)
        return principal

    def _remember(self, sha: str, principal: Principal | None) -> None:
        self.remembered[sha] = (time.monotonic(), principal)
        self.remembered.move_to_end(sha)
        while len(self.remembered) > self.settings.cache_entries:
            self.remembered.popitem(last=False)

    def _principal(self, tenant: str, sha: str, rpm: int | None, tpm: int | None,
                   trusted_gateway: bool = False) -> Principal:
        return Principal(tenant, sha[:16], rpm or self.settings.default_requests_per_minute,
                         tpm or self.settings.default_tokens_per_minute, trusted_gateway)


def _int(value: str | None) -> int | None:
    return int(value) if value else None
