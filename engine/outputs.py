"""`RequestOutput`: one streamed step of a request, as the async API yields it."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RequestOutput:
    request_id: str
    text: str = ""                                        # new text since the previous output
    token_ids: list[int] = field(default_factory=list)    # new token ids since the previous output
    finish_reason: str | None = None                      # None until the last output: "stop" | "length"
    prompt_tokens: int = 0
    completion_tokens: int = 0                            # running count

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None
