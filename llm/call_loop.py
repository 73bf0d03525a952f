"""The call loop every provider is built on (`BaseProvider`): a provider adds one attempt
(`_complete`, `_stream`) and the failures its errors stand for (`_classify`); the loop adds the
retries, the timing and the journal's rows (journal.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llm import journal
from llm.base import LLMRequest, LLMResult, ModelClasses
from llm.deadline import DeadlinePassed, call_deadline
from llm.retry import Failure, StreamBroken, call_with_retries
from llm.streaming import DraftStream, TextSink


class TokenCounts(TypedDict, total=False):
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


@dataclass(frozen=True)
class Completion:
    """What one successful attempt produced; the call loop adds timing and attempt counts."""

    data: dict[str, Any] | None
    raw_text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    parse_error: str | None = None


class BaseProvider:
    """Retries, timing and the journal in one place, so every provider bills and logs alike."""

    name: ClassVar[str] = "base"
    streams: ClassVar[bool] = False

    def __init__(self, *, bot_id: int, models: ModelClasses) -> None:
        self.bot_id = bot_id
        self.models = models

    def complete_structured(self, request: LLMRequest) -> LLMResult:
        return self._run(request, None)

    def stream_structured(self, request: LLMRequest, on_text_delta: TextSink) -> LLMResult:
        return self._run(request, on_text_delta if self.streams else None)

    def _complete(self, request: LLMRequest, model: str, ends: float) -> Completion:
        """One call, over by `ends` (time.monotonic(); llm/deadline.py)."""
        raise NotImplementedError

    def _stream(self, request: LLMRequest, model: str, draft: DraftStream, ends: float) -> Completion:
        """Like `_complete`, feeding the structured reply's JSON fragments to `draft` as they come."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> Failure | None:
        """The failure an exception stands for, or None for a bug that must propagate."""
        raise NotImplementedError

    def _attempt(self, request: LLMRequest, model: str, sink: TextSink | None) -> Completion:
        ends = call_deadline(request.timeout, request.deadline)
        if sink is None:
            return self._complete(request, model, ends)
        draft = DraftStream(
            sink, field=request.stream_field, release=request.stream_release, gate=request.stream_gate
        )
        try:
            return self._stream(request, model, draft, ends)
        except Exception as exc:
            if draft.emitted:
                raise StreamBroken(exc) from exc
            raise

    def _classify_any(self, exc: Exception) -> Failure | None:
        if isinstance(exc, DeadlinePassed):
            return Failure("timeout")
        return self._classify(exc)

    def _classify_attempt(self, exc: Exception) -> Failure | None:
        if isinstance(exc, StreamBroken):
            inner = self._classify_any(exc.cause)
            return Failure(inner.code, inner.status, final=True) if inner else None
        return self._classify_any(exc)

    def _run(self, request: LLMRequest, sink: TextSink | None) -> LLMResult:
        model = self.models.for_class(request.model_class)
        started = time.monotonic()
        outcome, attempts = call_with_retries(
            lambda: self._attempt(request, model, sink), self._classify_attempt, person_waits=request.person_waits,
            deadline=request.deadline,
        )
        latency_ms = int((time.monotonic() - started) * 1000)
        result = self._result(outcome, model=model, attempts=attempts, latency_ms=latency_ms)
        journal.llm_call_record(bot_id=self.bot_id, request=request, result=result)
        return result

    def _result(self, outcome: Completion | Failure, *, model: str, attempts: int, latency_ms: int) -> LLMResult:
        if isinstance(outcome, Failure):
            return LLMResult(
                data=None, raw_text="", model=model, provider=self.name, latency_ms=latency_ms,
                attempts=attempts, error=outcome.code, status=outcome.status,
            )
        return LLMResult(
            data=outcome.data, raw_text=outcome.raw_text, model=outcome.model or model, provider=self.name,
            input_tokens=outcome.input_tokens, output_tokens=outcome.output_tokens,
            cache_read_tokens=outcome.cache_read_tokens, cache_write_tokens=outcome.cache_write_tokens,
            latency_ms=latency_ms, attempts=attempts, parse_error=outcome.parse_error,
        )
