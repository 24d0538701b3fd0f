"""`GuideCompiler`: one engine's grammar compiler. Compiles a `GuideSpec` once (with its opening
closing plan) and keeps the result in a bounded LRU, so every later request with the same schema or
tool set starts at once. Thread-safe: the async API compiles off the event loop.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import xgrammar as xgr

from engine.guided.closer import closing_tokens
from engine.guided.errors import GrammarError, first_line
from engine.guided.schema_check import check_schema
from engine.guided.spec import GuideSpec
from engine.guided.vocab import Vocab, build_vocab
from engine.tokenizer import Tokenizer

OPENING_PLAN_LIMIT = 4096    # tokens the closing search may take from the grammar's start


@dataclass
class CompiledGuide:
    spec: GuideSpec
    grammar: xgr.CompiledGrammar
    vocab: Vocab
    opening_plan: list[int]       # tokens that take the grammar's start to a complete answer

    @property
    def min_tokens(self) -> int:
        """The budget this grammar needs for a guaranteed complete answer (the closing plan's length)."""
        return len(self.opening_plan)


@dataclass
class CompilerStats:
    compiled: int = 0
    cache_hits: int = 0


class GuideCompiler:
    def __init__(self, tokenizer: Tokenizer, vocab_size: int, stop_ids: list[int], max_cached: int = 256):
        self.tokenizer, self.vocab_size, self.stop_ids = tokenizer, vocab_size, list(stop_ids)
        self.max_cached = max_cached
        self.cache: OrderedDict[GuideSpec, CompiledGuide] = OrderedDict()
        self.stats = CompilerStats()
        self._vocab: Vocab | None = None
        self._compiler: xgr.GrammarCompiler | None = None
        self._lock = threading.Lock()

    def compile(self, spec: GuideSpec) -> CompiledGuide:
        with self._lock:
            if (hit := self.cache.get(spec)) is not None:
                self.cache.move_to_end(spec)
                self.stats.cache_hits += 1
                return hit
        compiled = self._compile(spec)
        with self._lock:
            self.cache[spec] = compiled
            self.stats.compiled += 1
            while len(self.cache) > self.max_cached:
                self.cache.popitem(last=False)
        return compiled

    def _compile(self, spec: GuideSpec) -> CompiledGuide:
        compiler, vocab = self._ensure()
        if spec.kind == "json_schema":
            check_schema(spec.source)
        try:
            grammar = self._grammar(compiler, spec)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise GrammarError(f"the {spec.kind.replace('_', ' ')} cannot be compiled: {first_line(exc)}") \
                from None
        plan = closing_tokens(xgr.GrammarMatcher(grammar), OPENING_PLAN_LIMIT, vocab)
        if plan is None:
            raise GrammarError(f"the {spec.kind.replace('_', ' ')} admits no answer the engine can complete "
                               f"within {OPENING_PLAN_LIMIT} tokens")
        return CompiledGuide(spec, grammar, vocab, plan)

    @staticmethod
    def _grammar(compiler: xgr.GrammarCompiler, spec: GuideSpec) -> xgr.CompiledGrammar:
        if spec.kind == "json_object":
            return compiler.compile_json_schema('{"type": "object"}', any_whitespace=False, strict_mode=False)
        if spec.kind == "json_schema":
            return compiler.compile_json_schema(spec.source, any_whitespace=False, strict_mode=True)
        return compiler.compile_structural_tag(spec.source)

    def _ensure(self) -> tuple[xgr.GrammarCompiler, Vocab]:
        with self._lock:
            if self._compiler is None:
                self._vocab = build_vocab(self.tokenizer, self.vocab_size, self.stop_ids)
                self._compiler = xgr.GrammarCompiler(self._vocab.info, max_threads=1)
            return self._compiler, self._vocab
