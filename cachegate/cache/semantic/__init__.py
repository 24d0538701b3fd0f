"""The semantic cache tier: a question that means the same as one already answered gets that answer.

Embedder → context → scope → faiss index → threshold policy → entry store. `tier.SemanticTier` is the facade over
what the tier holds (`parts`) and its four concerns: `lookup` (probe, search, judgement), `store` (storing and
eviction), `invalidation`, and `follow` (the catalog kept in step with a shared store). Built from the settings by
`cachegate.build_parts`.
"""
