"""No model configured: every call answers "no model" at once, and the assistant runs on
retrieval only. Nothing is journaled or billed, since nothing was called."""

from __future__ import annotations

from typing import ClassVar

from llm.base import LLMRequest, LLMResult, TextSink


class NoneProvider:
    name: ClassVar[str] = "none"
    streams: ClassVar[bool] = False

    def __init__(self, *, bot_id: int) -> None:
        self.bot_id = bot_id

    def complete_structured(self, request: LLMRequest) -> LLMResult:
        return LLMResult(data=None, raw_text="", model="", provider=self.name, attempts=0, error="no_provider")

    def stream_structured(self, request: LLMRequest, on_text_delta: TextSink) -> LLMResult:
        return self.complete_structured(request)
