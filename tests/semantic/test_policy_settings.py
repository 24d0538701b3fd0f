"""`cache.semantic.policy` built into a policy: each kind its own, namespaces applied; the policy owns its prefilter
slack, the setting a namespace tunes, and the change of that setting (no caller asks which class it is)."""
from __future__ import annotations

import json

import pytest

from cachegate.build_parts import matcher_folder, semantic_policy
from cachegate.cache.semantic import matcher_files
from cachegate.settings import SemanticCacheSettings
from policies.matcher import MatcherPolicy
from policies.thresholds import CalibratedPolicy, CosinePolicy


def cfg(policy, **namespaces) -> SemanticCacheSettings:
    return SemanticCacheSettings.model_validate({"policy": policy, "namespaces": namespaces})


def test_cosine_kind_is_a_cosine_policy_with_namespace_thresholds():
    policy = semantic_policy(cfg({"kind": "cosine", "threshold": 0.85}, faq={"threshold": 0.8}))
    assert isinstance(policy, CosinePolicy)
    assert (policy.threshold, policy.namespaces, policy.min_cosine) == (0.85, {"faq": 0.8}, 0.8)


def test_the_packaged_matcher_takes_targets_and_cosine_namespaces():
    policy = semantic_policy(cfg({"kind": "matcher"}, faq={"threshold": 0.8}, support={"target_false_hit_rate": 0.01}))
    if matcher_files.is_matcher(matcher_files.packaged_folder()):
        assert isinstance(policy, MatcherPolicy) and matcher_folder(cfg({"kind": "matcher"})) is not None
    else:                                           # a build without the matcher's files
        assert isinstance(policy, CalibratedPolicy)
    assert policy.namespaces == {"support": 0.01} and policy.cosine_namespaces == {"faq": 0.8}


def test_calibrated_kind_reads_its_file(tmp_path):
    from cachegate.cache.semantic.policy_file import packaged_policy
    path = tmp_path / "fitted.json"
    path.write_text(json.dumps(packaged_policy()))
    policy = semantic_policy(cfg({"kind": "calibrated", "path": str(path)}, support={"target_false_hit_rate": 0.01}))
    assert isinstance(policy, CalibratedPolicy) and policy.namespaces == {"support": 0.01}
    assert matcher_folder(cfg({"kind": "calibrated", "path": str(path)})) is None


def test_a_matcher_folder_without_its_files_fails_clearly(tmp_path):
    with pytest.raises(ValueError, match="matcher.json"):
        semantic_policy(cfg({"kind": "matcher", "path": str(tmp_path)}))


@pytest.mark.parametrize("policy", [
    CosinePolicy(0.9, {"faq": 0.8}),
    semantic_policy(cfg({"kind": "matcher"})),
])
def test_the_policy_owns_its_prefilter_slack(policy):
    assert policy.fetch_floor == policy.min_cosine - 0.1                       # lookups
    assert policy.invalidation_floor() == policy.min_cosine - 0.15             # invalidation by question
    assert policy.invalidation_floor(0.7) == 0.7 - 0.15


def test_a_namespace_setting_is_changed_by_asking_the_policy():
    cosine = CosinePolicy(0.9)
    assert cosine.knob == "threshold" and cosine.with_threshold("faq", 0.8).namespaces == {"faq": 0.8}
    assert cosine.with_threshold("faq", 0.8).view() == {"kind": "cosine", "threshold": 0.9, "namespaces": {"faq": 0.8}}
    trained = semantic_policy(cfg({"kind": "matcher"}))
    assert trained.knob == "target_false_hit_rate"
    changed = trained.with_threshold("support", 0.01)
    assert type(changed) is type(trained) and changed.namespaces == {"support": 0.01} and trained.namespaces == {}
    assert changed.view() == {"kind": "calibrated", "target_false_hit_rate": trained.target,
                              "namespaces": {"support": 0.01}}
