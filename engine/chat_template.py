"""Rendering a model's own Jinja chat template in a sandbox, the way HF tokenizers do.

Templates get `messages`, `tools`, `add_generation_prompt`, the special-token strings, and the helpers
`raise_exception`, `strftime_now` and a `tojson` filter that keeps non-ASCII text as is.
A base model (no template of its own, e.g. Gemma 3 270M) gets FALLBACK_TEMPLATE: a plain
"Question: / Answer:" transcript such models continue well, with FALLBACK_STOP ending the answer
where the model would start the next question.
"""
from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from engine.errors import ChatTemplateError

FALLBACK_TEMPLATE = (
    "{{ bos_token or '' }}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] }}\n\n"
    "{% elif m['role'] == 'user' %}Question: {{ m['content'] }}\n"
    "{% elif m['role'] == 'assistant' %}Answer: {{ m['content'] }}\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}Answer:{% endif %}"
)
FALLBACK_STOP = ["\nQuestion:"]


def raise_exception(message: str) -> None:
    raise ChatTemplateError(f"chat template: {message}")


def tojson(value, ensure_ascii: bool = False, indent: int | None = None, separators=None,
           sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


@lru_cache(maxsize=16)
def compile_template(source: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def render_chat(source: str, messages: list[dict], *, add_generation_prompt: bool = True,
                tools: list[dict] | None = None, **context) -> str:
    """Render `messages` to the prompt text; `context` carries bos_token, eos_token and extras."""
    try:
        return compile_template(source).render(
            messages=messages, tools=tools, documents=None, add_generation_prompt=add_generation_prompt,
            **context,
        )
    except jinja2.TemplateError as e:
        raise ChatTemplateError(f"chat template failed: {e}") from e
