"""`Sequence`: one request's token state (prompt, generated ids, finish reason) and identity."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from engine.sampling_params import SamplingParams


@dataclass
class Sequence:
    prompt_token_ids: list[int]
    params: SamplingParams
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    tenant: str | None = None
    priority: int = 0
    output_token_ids: list[int] = field(default_factory=list)
    finish_reason: str | None = None

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_completion_tokens(self) -> int:
        return len(self.output_token_ids)

    @property
    def num_tokens(self) -> int:
        return self.num_prompt_tokens + self.num_completion_tokens

    @property
    def max_tokens_total(self) -> int:
        """KV capacity the request can ever need."""
        return self.num_prompt_tokens + self.params.max_tokens

    @property
    def is_finished(self) -> bool:
        return self.finish_reason is not None

    def append(self, token_id: int) -> None:
        assert not self.is_finished, "no tokens after the finish"
        assert self.num_completion_tokens < self.params.max_tokens
        self.output_token_ids.append(token_id)
