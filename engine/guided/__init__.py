"""Grammar-constrained decoding: a request's grammar (a JSON schema, any JSON object, or tool calls)
compiled once per engine and cached, a matcher per request that masks its logits and follows its tokens,
and a closing plan that keeps every answer completable within its max_tokens.
"""
from engine.guided.spec import GuideSpec

__all__ = ["GuideSpec"]
