"""Typed settings of the gateway, read from a YAML file, then `CACHEGATE_*` variables, then CLI flags.

Later sources override earlier ones key by key. Nested keys use `__` in variable names:
`CACHEGATE_SERVER__PORT=9000`, `CACHEGATE_CACHE__EXACT__STORE=redis`, `CACHEGATE_REDIS__URL=redis://...`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

ENV_PREFIX = "CACHEGATE_"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(Section):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    max_body_bytes: int = Field(4 * 1024 * 1024, gt=0)


class ModelSettings(Section):
    name: str
    tier: str = "small"
    backend: Literal["inprocess"] = "inprocess"
    path: str = "packaged:smollm2-135m-instruct"
    device: str = "auto"
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    max_context: int | None = Field(None, gt=0)
    default_max_tokens: int = Field(256, gt=0)


class ExactCacheSettings(Section):
    enabled: bool = True
    store: Literal["memory", "redis"] = "memory"
    ttl_s: float = Field(3600.0, gt=0)
    max_bytes: int = Field(256 * 1024 * 1024, gt=0)
    namespace: str = "exact"


class CacheSettings(Section):
    exact: ExactCacheSettings = ExactCacheSettings()
    store_truncated: bool = False


class RedisSettings(Section):
    url: str | None = None
    key_prefix: str = "cachegate:"
    socket_timeout_s: float = Field(0.5, gt=0)
    retry_interval_s: float = Field(1.0, ge=0)


class Settings(Section):
    server: ServerSettings = ServerSettings()
    models: list[ModelSettings] = Field(
        default_factory=lambda: [ModelSettings(name="smollm2-135m-instruct")], min_length=1
    )
    default_model: str | None = None
    cache: CacheSettings = CacheSettings()
    redis: RedisSettings = RedisSettings()

    @field_validator("models")
    @classmethod
    def names_are_unique(cls, models: list[ModelSettings]) -> list[ModelSettings]:
        names = [m.name for m in models]
        if len(set(names)) != len(names):
            raise ValueError(f"model names must be unique, got {names}")
        return models

    def model(self, name: str) -> ModelSettings | None:
        return next((m for m in self.models if m.name == name), None)

    @property
    def default_model_name(self) -> str:
        return self.default_model or self.models[0].name


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
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "ADMIN_TOKEN":
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
