"""`Tokenizer`: text <-> ids over a `tokenizers` backend, plus the model's chat template.

Built by the loaders (from GGUF vocab + merges, or tokenizer.json); special tokens are added tokens,
so `<|im_start|>` in rendered template text encodes as one id.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import tokenizers

from engine.chat_template import FALLBACK_STOP, FALLBACK_TEMPLATE, render_chat
from engine.errors import ChatTemplateError


@dataclass
class Tokenizer:
    backend: tokenizers.Tokenizer
    chat_template: str | None = None
    special_tokens: dict[str, str] = field(default_factory=dict)  # bos_token, eos_token, ... -> text
    chat_stop: list[str] = field(default_factory=list)   # stop strings chat requests add (fallback template)

    @property
    def has_fallback_template(self) -> bool:
        return bool(self.chat_stop)

    def use_fallback_template(self) -> None:
        """For a base model without a template of its own: a plain Question / Answer transcript."""
        self.chat_template, self.chat_stop = FALLBACK_TEMPLATE, list(FALLBACK_STOP)

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    @property
    def bos_token(self) -> str | None:
        return self.special_tokens.get("bos_token")

    @property
    def eos_token(self) -> str | None:
        return self.special_tokens.get("eos_token")

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Like HF `tok(text)["input_ids"]`: `add_special_tokens` applies the post-processor (BOS...)."""
        return self.backend.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self.backend.token_to_id(token)

    def render_chat(self, messages: list[dict], add_generation_prompt: bool = True,
                    tools: list[dict] | None = None, **kwargs) -> str:
        if not self.chat_template:
            raise ChatTemplateError("this model has no chat template; send a plain prompt instead")
        return render_chat(self.chat_template, messages, add_generation_prompt=add_generation_prompt,
                           tools=tools, **{**self.special_tokens, **kwargs})

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True,
                            tools: list[dict] | None = None, **kwargs) -> list[int]:
        """Render with the model's template, then encode without adding special tokens
        (the template writes them)."""
        text = self.render_chat(messages, add_generation_prompt=add_generation_prompt, tools=tools, **kwargs)
        return self.encode(text, add_special_tokens=False)
