"""The one small interface every provider speaks; the call loop they share (retries, timing, the
journal) is in call_loop.py.

A request carries its system prompt as parts so the stable prefix (rules, voice) can be cached by
providers that support it while the variable part (numbered sources, history) follows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, TypedDict

from llm.streaming import ReleaseRule, StreamGate, TextSink

ModelClass = Literal["fast", "strong"]


@dataclass(frozen=True)
class SystemPart:
    text: str
    stable: bool = False  # the same for every request of this bot: part of the cacheable prefix


class ChatMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class LLMRequest:
    system: Sequence[SystemPart]
    messages: Sequence[ChatMessage]
    schema: Mapping[str, Any]
    tool_name: str
    tool_description: str = ""
    model_class: ModelClass = "fast"
    max_tokens: int = 1024
    purpose: str = "answer"
    route: str = "chat"
    # A person is looking at a spinner: a timed-out call is not repeated (the wait already cost
    # the whole timeout; retrieval-only is the better answer now).
    person_waits: bool = True
    conversation_id: int | None = None
    run_id: int | None = None  # an async route's run (the journal groups its rows by it)
    timeout: float | None = None  # None: settings.LLM_TIMEOUT
    # time.monotonic() by which every call for this request (retries, a form repair) must be over:
    # the budget of a turn a person waits on. None: each call just has its timeout.
    deadline: float | None = None
    stream_field: str = "answer"
    stream_release: ReleaseRule | None = None
    stream_gate: StreamGate | None = None  # how much of the released text may show (streaming.py)

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("LLMRequest needs at least one message")
        seen_variable = False
        for part in self.system:
            if part.stable and seen_variable:
                raise ValueError("stable system parts must come before variable ones (cache prefix)")
            seen_variable = seen_variable or not part.stable


@dataclass(frozen=True)
class LLMResult:
    data: dict[str, Any] | None
    raw_text: str
    model: str
    provider: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 1
    # no_provider | timeout | connection | rate_limited | overloaded | server_error | client_error
    # | bad_response | invalid_form
    error: str | None = None
    status: int | None = None  # HTTP status of the last failed attempt, when there was one
    # Why `data` is None although the call succeeded: no_tool_call | invalid_json | not_object.
    parse_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class ModelClasses:
    fast: str
    strong: str

    def for_class(self, model_class: ModelClass) -> str:
        return self.strong if model_class == "strong" else self.fast


class Provider(Protocol):
    name: ClassVar[str]
    streams: ClassVar[bool]
    bot_id: int

    def complete_structured(self, request: LLMRequest) -> LLMResult: ...

    def stream_structured(self, request: LLMRequest, on_text_delta: TextSink) -> LLMResult:
        """Like complete_structured, and meanwhile passes the growing `request.stream_field` text
        to `on_text_delta` as a draft. The returned result still goes through validation and the
        answer chain; the draft never replaces that decision."""
        ...
