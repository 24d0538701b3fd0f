"""Typed settings of the gateway, read from a YAML file, then `CACHEGATE_*` variables, then CLI flags.

Later sources override earlier ones key by key. Nested keys use `__` in variable names:
`CACHEGATE_SERVER__PORT=9000`, `CACHEGATE_CACHE__EXACT__STORE=redis`, `CACHEGATE_REDIS__URL=redis://...`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

ENV_PREFIX = "CACHEGATE_"
PACKAGED_POLICY = "packaged"      # the semantic policy shipped in `policies/data/`


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(Section):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    max_body_bytes: int = Field(4 * 1024 * 1024, gt=0)      # counted as the body arrives (413 past it)
    body_timeout_s: float = Field(30.0, gt=0)               # a body still arriving after this: 408
    header_timeout_s: float = Field(10.0, gt=0)             # a connection without its request headers: closed
    max_concurrent_requests: int = Field(256, ge=1)         # API requests in flight; past it a 503 + retry-after


class RetrySettings(Section):
    attempts: int = Field(3, ge=1, le=10)        # tries per replica, the first included
    base_delay_s: float = Field(0.1, ge=0)       # doubled each retry, ± jitter
    max_delay_s: float = Field(2.0, ge=0)
    jitter: float = Field(0.5, ge=0, le=1)


class BreakerSettings(Section):
    failure_threshold: int = Field(5, ge=1)      # consecutive failures that open the circuit
    reset_after_s: float = Field(10.0, gt=0)     # open this long, then one probe


# The dtypes a model may run in (settings, `cachegate engine --dtype`, `cachegate bench engine --dtype`);
# "auto" resolves per device in engine.config.auto_dtype.
DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")


class ModelSettings(Section):
    name: str
    tier: str = "small"
    backend: Literal["inprocess", "engine", "upstream"] = "inprocess"
    path: str = "packaged:smollm2-135m-instruct"          # inprocess: what the engine loads
    device: str = "auto"
    dtype: Literal[DTYPE_CHOICES] = "auto"                 # inprocess
    max_context: int | None = Field(None, gt=0)
    share_prefix_across_tenants: bool = False              # inprocess: tenants reuse each other's cached prefixes
    max_waiting: int = Field(64, ge=1)                     # inprocess: queued requests past this get a 503 at once
    default_max_tokens: int = Field(256, gt=0)
    replicas: list[str] = Field(default_factory=list)      # engine / upstream: base URLs (…/v1)
    upstream_model: str | None = None                       # the name the upstream knows (default: name)
    api_key_env: str | None = None                          # engine / upstream: env variable holding its key
                                                            # (engine servers: their CACHEGATE_ENGINE_TOKEN)
    connect_timeout_s: float = Field(2.0, gt=0)
    read_timeout_s: float = Field(60.0, gt=0)               # longest silence between two chunks
    retry: RetrySettings = RetrySettings()
    breaker: BreakerSettings = BreakerSettings()
    price_in_per_1k: float = Field(0.0, ge=0)               # cost accounting, in your currency
    price_out_per_1k: float = Field(0.0, ge=0)

    @model_validator(mode="after")
    def remote_needs_replicas(self) -> ModelSettings:
        if self.backend != "inprocess" and not self.replicas:
            raise ValueError(f"model {self.name}: backend '{self.backend}' needs at least one URL in 'replicas'")
        return self


class ComplexityRouterSettings(Section):
    threshold: float = 0.8
    completion_small_below_tokens: int = Field(200, ge=0)
    weights: dict[str, float] = Field(default_factory=dict)   # overrides of ComplexityWeights fields


class RoutingSettings(Section):
    policy: Literal["complexity", "learned", "fixed"] = "complexity"
    learned_path: str | None = None          # policy: learned, a file from `cachegate router train`
    fixed_tier: str = "small"                # policy: fixed
    complexity: ComplexityRouterSettings = ComplexityRouterSettings()
    fallback: dict[str, list[str]] = Field(default_factory=lambda: {"large": ["small"]})
    fallback_pinned: bool = True             # a request naming a model also falls back when it is down


class ExactCacheSettings(Section):
    enabled: bool = True
    store: Literal["memory", "redis"] = "memory"
    ttl_s: float = Field(3600.0, gt=0)
    max_bytes: int = Field(256 * 1024 * 1024, gt=0)
    namespace: str = "exact"
    store_truncated: bool = True    # a cut answer serves requests whose max_tokens is at most its own


class EmbedderSettings(Section):
    model: str = "packaged:all-minilm-l6-v2"   # or a local sentence-transformers folder
    max_batch: int = Field(64, ge=1)
    max_wait_ms: float = Field(2.0, ge=0)          # window in which concurrent lookups share an encode
    cache_size: int = Field(4096, ge=0)            # recently embedded texts kept
    precision: Literal["auto", "float32", "bfloat16"] = "auto"   # auto: bfloat16 with AMX, or if timed faster
    threads: int = Field(1, ge=0)                  # torch threads of the embedding worker only (0: torch's default)


class SemanticIndexSettings(Section):
    approximate_after: int = Field(20_000, ge=1)   # a scope past this many entries moves to IVF
    nprobe: int = Field(32, ge=1)
    tombstone_fraction: float = Field(0.2, gt=0, le=1)
    top_k: int = Field(16, ge=1, le=256)


class NamespaceSettings(Section):
    ttl_s: float | None = Field(None, gt=0)
    threshold: float | None = Field(None, ge=-1, le=1)                 # cosine policy; other kinds: by cosine
    target_false_hit_rate: float | None = Field(None, gt=0, lt=1)      # for a calibrated policy; held by checks
    verify_rate: float | None = Field(None, ge=0, le=1)                # share of this namespace's hits re-asked


class VerifySettings(Section):
    """Shadow checks and the false-hit target they hold (see cachegate/verified/)."""
    per_minute: int = Field(30, ge=0)              # background re-asks at most, per minute
    busy_at: int = Field(4, ge=1)                  # skipped while this many requests are in flight on the models
    answer_similarity: float = Field(0.85, ge=-1, le=1)   # a fresh answer this close to the served one agrees
    target: float = Field(0.02, gt=0, lt=1)        # target false-hit rate when the policy names none (cosine)
    min_evidence: int = Field(20, ge=1)            # checks since the last change before the decision may tighten
    loosen_evidence: int = Field(200, ge=1)        # checks since the last change before it may loosen
    window: int = Field(200, ge=1)                 # the most recent checks the estimate reads (drift shows fast)
    served_entries: int = Field(50_000, ge=1)      # recent hits remembered for feedback (by response id)
    max_labels: int = Field(10_000, ge=1)          # verified labels kept (for `cachegate train matcher --from-verified`)
    labels_path: str | None = None                 # also append them to this JSON-lines file


class CosinePolicySettings(Section):
    """Plain cosine: a paraphrase at least this similar is served (key differences still veto)."""
    kind: Literal["cosine"] = "cosine"
    threshold: float = Field(0.9, ge=-1, le=1)


class MatcherPolicySettings(Section):
    """The trained matcher: `packaged` (policies/data/matcher; a build without its files falls back to the packaged
    calibrated evaluator) or a folder written by `cachegate train matcher`."""
    kind: Literal["matcher"] = "matcher"
    path: str = PACKAGED_POLICY


class CalibratedPolicySettings(Section):
    """A policy file written by `cachegate calibrate`."""
    kind: Literal["calibrated"] = "calibrated"
    path: str = Field(min_length=1)


SemanticPolicySettings = Annotated[CosinePolicySettings | MatcherPolicySettings | CalibratedPolicySettings,
                                   Field(discriminator="kind")]


def policy_shorthand(policy: str, threshold: Any = None) -> dict[str, Any]:
    """The older string form of `cache.semantic.policy`, still read: `packaged`, `cosine` (with the section's
    `threshold` beside it), a matcher folder, or a file from `cachegate calibrate`."""
    if policy == "cosine":
        return {"kind": "cosine"} | ({} if threshold is None else {"threshold": threshold})
    if policy == PACKAGED_POLICY or Path(policy).is_dir():
        return {"kind": "matcher", "path": policy}
    return {"kind": "calibrated", "path": policy}


class SemanticCacheSettings(Section):
    enabled: bool = True
    store: Literal["memory", "redis"] = "memory"
    namespace: str = "semantic"                      # key namespace in the store
    ttl_s: float = Field(3600.0, gt=0)
    max_entries: int = Field(100_000, ge=1)
    max_bytes: int = Field(512 * 1024 * 1024, gt=0)
    # Earlier turns of a conversation. "exact": an entry serves only a conversation whose every earlier turn
    # is the same (a digest of them is part of the scope). "window": the last `context_turns` exchanges are
    # embedded and compared by similarity, the turns before them must match exactly.
    history: Literal["exact", "window"] = "exact"
    context_turns: int = Field(1, ge=0)              # window: earlier user turns (with answers) embedded
    max_context_chars: int = Field(1500, ge=0)
    policy: SemanticPolicySettings = MatcherPolicySettings()   # {kind: matcher | cosine | calibrated, ...}
    namespaces: dict[str, NamespaceSettings] = Field(default_factory=dict)
    embedder: EmbedderSettings = EmbedderSettings()
    index: SemanticIndexSettings = SemanticIndexSettings()
    verify_rate: float = Field(0.02, ge=0, le=1)     # share of semantic hits re-asked in the background
    verify: VerifySettings = VerifySettings()
    sweep_interval_s: float = Field(30.0, gt=0)
    store_truncated: bool = True     # a cut answer serves requests whose max_tokens is at most its own

    @model_validator(mode="before")
    @classmethod
    def read_shorthand(cls, data: Any) -> Any:
        """`policy: cosine` + `threshold: 0.9` (the older form) reads as `policy: {kind: cosine, threshold: 0.9}`;
        a `threshold` beside any other string form was never read, and still is not."""
        if not isinstance(data, dict):
            return data
        if "threshold" in data and isinstance(data.get("policy", PACKAGED_POLICY), str):
            data = dict(data)
            threshold = data.pop("threshold")
            data["policy"] = policy_shorthand(data.get("policy", PACKAGED_POLICY), threshold)
        elif isinstance(data.get("policy"), str):
            data = data | {"policy": policy_shorthand(data["policy"])}
        return data


class CuratedSettings(Section):
    enabled: bool = True         # curated answers (`cachegate answers import`), matched before the semantic tier
    namespace: str = "curated"   # key prefix of their entries in the semantic store


class CacheSettings(Section):
    exact: ExactCacheSettings = ExactCacheSettings()
    semantic: SemanticCacheSettings = SemanticCacheSettings()
    curated: CuratedSettings = CuratedSettings()
    single_flight: bool = True
    # A request that samples (temperature > 0, no seed): "store" caches its one sample and replays it to
    # every later identical request (what other gateways do); "skip" never looks it up nor stores it.
    sampled: Literal["store", "skip"] = "store"
    # Cached answers streamed back: "none" sends the chunks at once, "original" at the backend's pace.
    replay_pacing: Literal["none", "original"] = "none"


class RedisSettings(Section):
    url: str | None = None
    key_prefix: str = "cachegate:"
    socket_timeout_s: float = Field(0.5, gt=0)
    retry_interval_s: float = Field(1.0, ge=0)


class ApiKeySettings(Section):
    key: SecretStr | None = None                   # the key itself, or
    key_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")   # its SHA-256, so the file holds no secret
    tenant: str = Field(min_length=1)
    requests_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1)
    trusted_gateway: bool = False    # a gateway's key (engine servers): may name the tenant it serves

    @model_validator(mode="after")
    def one_key(self) -> ApiKeySettings:
        if (self.key is None) == (self.key_sha256 is None):
            raise ValueError("an API key needs exactly one of 'key' or 'key_sha256'")
        return self


class AuthSettings(Section):
    keys: list[ApiKeySettings] = Field(default_factory=list)   # none (and redis_keys off) = open gateway
    redis_keys: bool = False       # also accept keys stored in Redis (`cachegate keys add`)
    cache_s: float = Field(30.0, ge=0)    # how long a Redis key lookup is remembered
    cache_entries: int = Field(10_000, ge=1)    # at most this many remembered (least recently used go first)
    default_requests_per_minute: int | None = Field(None, ge=1)   # for keys that set no limit of their own
    default_tokens_per_minute: int | None = Field(None, ge=1)


class LimitSettings(Section):
    max_messages: int = Field(256, ge=1)             # messages per chat request
    max_prompt_chars: int = Field(200_000, ge=1)     # characters over all messages or the prompt
    max_tokens: int = Field(4096, ge=1)              # largest max_tokens a request may ask for


class AdminSettings(Section):
    token: SecretStr | None = None           # bearer token of /admin (or CACHEGATE_ADMIN_TOKEN); none = refused
    series_minutes: int = Field(60, ge=1, le=24 * 60)    # per-minute history the dashboard shows
    flush_interval_s: float = Field(2.0, gt=0)           # with Redis: how often figures join the fleet's


class DistillSettings(Section):
    """The answer log of the large tier that `cachegate distill` trains the small model on (opt-in)."""
    log: Literal["none", "file", "redis"] = "none"    # file: JSONL under log_path | redis: redis.url
    log_path: str = "distill-log"                    # file: a folder, one file per tenant
    tiers: list[str] = Field(default_factory=lambda: ["large"])   # answers of these tiers are logged
    tenants: list[str] = Field(default_factory=list)              # only these tenants ([] = every tenant)
    exclude_tenants: list[str] = Field(default_factory=list)
    exclude_namespaces: list[str] = Field(default_factory=list)
    max_entries: int = Field(20_000, ge=2)               # per tenant; past either bound the oldest go
    max_bytes: int = Field(64 * 1024 * 1024, ge=1024)    # per tenant


class Settings(Section):
    server: ServerSettings = ServerSettings()
    models: list[ModelSettings] = Field(
        default_factory=lambda: [
            ModelSettings(name="smollm2-135m-instruct"),
            ModelSettings(name="gemma3-270m", tier="large", path="packaged:gemma3-270m"),
        ], min_length=1
    )
    routing: RoutingSettings = RoutingSettings()
    cache: CacheSettings = CacheSettings()
    redis: RedisSettings = RedisSettings()
    auth: AuthSettings = AuthSettings()
    limits: LimitSettings = LimitSettings()
    admin: AdminSettings = AdminSettings()
    distill: DistillSettings = DistillSettings()

    @field_validator("models")
    @classmethod
    def names_are_unique(cls, models: list[ModelSettings]) -> list[ModelSettings]:
        names = [m.name for m in models]
        if len(set(names)) != len(names):
            raise ValueError(f"model names must be unique, got {names}")
        return models

    def model(self, name: str) -> ModelSettings | None:
        return next((m for m in self.models if m.name == name), None)


def load_settings(
    path: str | Path | None = None,
    env: dict[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """YAML file < environment < explicit overrides (CLI flags), merged key by key."""
    data: dict[str, Any] = {}
    if path:
        data = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: the config file must hold a mapping at its top level")
    deep_merge(data, env_overrides(os.environ if env is None else env))
    deep_merge(data, overrides or {})
    return Settings.model_validate(data)


def env_overrides(env: dict[str, str]) -> dict[str, Any]:
    """`CACHEGATE_A__B=v` -> {"a": {"b": v}}; values are parsed as YAML scalars (numbers, booleans, lists)."""
    out: dict[str, Any] = {}
    for name, raw in env.items():
        if name == ENV_PREFIX + "ADMIN_TOKEN":
            out.setdefault("admin", {})["token"] = raw
            continue
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "CONFIG":   # CONFIG names the file itself
            continue
        keys = name[len(ENV_PREFIX):].lower().split("__")
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = yaml.safe_load(raw) if raw else raw
    return out


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = value
    return base
