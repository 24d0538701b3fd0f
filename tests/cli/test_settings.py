"""Settings precedence: YAML file < CACHEGATE_* environment < CLI flags; bad config fails clearly."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from cachegate.commands.main import main
from cachegate.commands.serve import settings_from_args
from cachegate.settings import Settings, load_settings


def write(tmp_path, text: str):
    path = tmp_path / "cachegate.yaml"
    path.write_text(text)
    return path


def test_embedded_defaults_serve_smollm2_with_a_memory_cache():
    s = Settings()
    assert (s.server.host, s.server.port) == ("127.0.0.1", 8000)
    assert s.cache.exact.store == "memory"
    assert s.models[0].name == "smollm2-135m-instruct"
    assert s.models[0].backend == "inprocess"


def test_yaml_then_env_then_overrides(tmp_path):
    path = write(tmp_path, "server:\n  port: 9000\n  host: 0.0.0.0\ncache:\n  exact:\n    ttl_s: 60\n")
    env = {"CACHEGATE_SERVER__PORT": "9100", "CACHEGATE_CACHE__EXACT__STORE": "redis", "OTHER": "x"}
    s = load_settings(path, env=env, overrides={"server": {"port": 9200}})
    assert s.server.port == 9200           # CLI beats env beats file
    assert s.server.host == "0.0.0.0"      # file value kept where nobody overrides it
    assert s.cache.exact.store == "redis"  # env
    assert s.cache.exact.ttl_s == 60       # file


def test_env_values_are_typed():
    s = load_settings(env={"CACHEGATE_CACHE__EXACT__ENABLED": "false", "CACHEGATE_CACHE__EXACT__MAX_BYTES": "1024"})
    assert s.cache.exact.enabled is False
    assert s.cache.exact.max_bytes == 1024


@pytest.mark.parametrize("text", [
    "server:\n  port: -1\n",
    "server:\n  prot: 9000\n",              # typo: unknown keys are errors, not silently ignored
    "cache:\n  exact:\n    store: memcached\n",
    "models: []\n",
    "models:\n  - name: a\n  - name: a\n",
])
def test_invalid_config_is_rejected(tmp_path, text):
    with pytest.raises(ValidationError):
        load_settings(write(tmp_path, text), env={})


def test_config_must_be_a_mapping(tmp_path):
    with pytest.raises(ValueError, match="mapping"):
        load_settings(write(tmp_path, "- a\n- b\n"), env={})


def test_cli_flags_override_the_file(tmp_path, monkeypatch):
    import argparse
    path = write(tmp_path, "server:\n  port: 9000\n")
    monkeypatch.delenv("CACHEGATE_SERVER__PORT", raising=False)
    args = argparse.Namespace(config=str(path), host=None, port=9300, log_level="debug",
                              redis_url="redis://127.0.0.1:1/0")
    s = settings_from_args(args)
    assert s.server.port == 9300 and s.server.log_level == "debug"
    assert s.cache.exact.store == "redis" and s.redis.url == "redis://127.0.0.1:1/0"


def test_cli_without_a_verb_fails(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


# -- cache.semantic.policy: a tagged union, the older string form still read ------------------------
def semantic_policy_of(tmp_path, text: str, env: dict | None = None):
    return load_settings(write(tmp_path, text), env=env or {}).cache.semantic.policy


def test_semantic_policy_defaults_to_the_packaged_matcher():
    assert Settings().cache.semantic.policy.model_dump() == {"kind": "matcher", "path": "packaged"}


@pytest.mark.parametrize("text, expected", [
    ("policy: {kind: cosine, threshold: 0.85}", {"kind": "cosine", "threshold": 0.85}),
    ("policy: {kind: cosine}", {"kind": "cosine", "threshold": 0.9}),
    ("policy: {kind: matcher}", {"kind": "matcher", "path": "packaged"}),
    ("policy: {kind: calibrated, path: fitted.json}", {"kind": "calibrated", "path": "fitted.json"}),
])
def test_semantic_policy_reads_by_kind(tmp_path, text, expected):
    assert semantic_policy_of(tmp_path, f"cache:\n  semantic:\n    {text}\n").model_dump() == expected


@pytest.mark.parametrize("old, new", [
    ("policy: cosine\n    threshold: 0.85", "policy: {kind: cosine, threshold: 0.85}"),
    ("policy: cosine", "policy: {kind: cosine, threshold: 0.9}"),
    ("policy: packaged", "policy: {kind: matcher, path: packaged}"),
    ("policy: packaged\n    threshold: 0.85", "policy: {kind: matcher, path: packaged}"),   # never read beside it
    ("threshold: 0.85", "policy: {kind: matcher, path: packaged}"),
    ("policy: fitted.json", "policy: {kind: calibrated, path: fitted.json}"),
])
def test_the_older_string_form_is_shorthand(tmp_path, old, new):
    assert semantic_policy_of(tmp_path, f"cache:\n  semantic:\n    {old}\n") == \
        semantic_policy_of(tmp_path, f"cache:\n  semantic:\n    {new}\n")


def test_a_folder_in_the_older_form_is_a_matcher(tmp_path):
    folder = tmp_path / "my-matcher"
    folder.mkdir()
    assert semantic_policy_of(tmp_path, f"cache:\n  semantic:\n    policy: {folder}\n").model_dump() == \
        {"kind": "matcher", "path": str(folder)}


def test_semantic_policy_from_the_environment():
    env = {"CACHEGATE_CACHE__SEMANTIC__POLICY__KIND": "cosine", "CACHEGATE_CACHE__SEMANTIC__POLICY__THRESHOLD": "0.92"}
    assert load_settings(env=env).cache.semantic.policy.model_dump() == {"kind": "cosine", "threshold": 0.92}
    short = {"CACHEGATE_CACHE__SEMANTIC__POLICY": "cosine", "CACHEGATE_CACHE__SEMANTIC__THRESHOLD": "0.92"}
    assert load_settings(env=short).cache.semantic.policy.model_dump() == {"kind": "cosine", "threshold": 0.92}


@pytest.mark.parametrize("text", [
    "policy: {kind: lexical}",                               # no such kind
    "policy: {threshold: 0.9}",                              # no kind
    "policy: {kind: cosine, threshold: 1.5}",
    "policy: {kind: cosine, path: fitted.json}",             # a field of another kind
    "policy: {kind: calibrated}",                            # a calibrated policy names its file
    "policy: {kind: cosine}\n    threshold: 0.85",           # beside the new form the threshold goes inside it
])
def test_invalid_semantic_policy_is_rejected(tmp_path, text):
    with pytest.raises(ValidationError):
        load_settings(write(tmp_path, f"cache:\n  semantic:\n    {text}\n"), env={})


def test_the_readme_policy_examples_are_valid():
    import re
    from pathlib import Path

    import yaml
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"### The semantic policy setting\n.*?```yaml\n(.*?)```", readme, re.DOTALL).group(1)
    shown = yaml.safe_load(block)
    assert Settings.model_validate(shown).cache.semantic.policy.kind == "matcher"
    for line in re.findall(r"# (policy: \{.*?\})", block):
        Settings.model_validate({"cache": {"semantic": yaml.safe_load(line)}})
