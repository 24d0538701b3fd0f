"""The semantic cache tier: a question that means the same as one already answered gets that answer.

Embedder → context → scope → faiss index → threshold policy → entry store; see `tier.SemanticTier`.
"""
