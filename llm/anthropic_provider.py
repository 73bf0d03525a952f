"""Claude through the official `anthropic` SDK: structured output by forced tool use.

The JSON schema becomes the input schema of one tool and `tool_choice` forces that tool, so a
well-behaved reply is exactly one `tool_use` block. Tools and the stable system parts form the
cacheable prefix; `cache_control` marks its last stable block (below the model's minimum prefix
length the API simply does not cache, so marking costs nothing). The SDK's own retries are off:
`retry.call_with_retries` is the one retry policy. Every call, streamed or not, reads its reply
under a `deadline.Watchdog`: it is over by its deadline however slowly the server sends.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import anthropic
import httpx2
from django.conf import settings

from llm.base import LLMRequest
from llm.call_loop import BaseProvider, Completion, TokenCounts
from llm.deadline import Watchdog, remaining
from llm.retry import Failure, failure_for_status, parse_retry_after
from llm.streaming import DraftStream


@lru_cache(maxsize=8)
def _sdk_client(api_key: str, base_url: str | None) -> anthropic.Anthropic:
    """One SDK client (and connection pool) per key and endpoint, shared by threads."""
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=settings.LLM_TIMEOUT)


def system_blocks(request: LLMRequest) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": part.text} for part in request.system]
    stable = [index for index, part in enumerate(request.system) if part.stable]
    if stable:
        blocks[stable[-1]]["cache_control"] = {"type": "ephemeral"}
    return blocks


def request_params(request: LLMRequest, model: str, timeout: float | None = None) -> dict[str, Any]:
    tool = {"name": request.tool_name, "input_schema": dict(request.schema)}
    if request.tool_description:
        tool["description"] = request.tool_description
    return {
        "model": model,
        "max_tokens": request.max_tokens,
        "system": system_blocks(request),
        "messages": [dict(message) for message in request.messages],
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": request.tool_name},
        "timeout": timeout or request.timeout or settings.LLM_TIMEOUT,
    }


def _usage(usage: Any) -> TokenCounts:
    return {
        "input_tokens": usage.input_tokens or 0,
        "output_tokens": usage.output_tokens or 0,
        "cache_read_tokens": getattr(usage, "cache_read_input_tokens", None) or 0,
        "cache_write_tokens": getattr(usage, "cache_creation_input_tokens", None) or 0,
    }


def _merge(start: TokenCounts, later: TokenCounts) -> TokenCounts:
    """Counts in `message_delta` are cumulative; one it leaves out (0) keeps its start value."""
    return TokenCounts(
        input_tokens=later.get("input_tokens") or start.get("input_tokens", 0),
        output_tokens=later.get("output_tokens") or start.get("output_tokens", 0),
        cache_read_tokens=later.get("cache_read_tokens") or start.get("cache_read_tokens", 0),
        cache_write_tokens=later.get("cache_write_tokens") or start.get("cache_write_tokens", 0),
    )


def completion_from_message(message: Any, tool_name: str) -> Completion:
    tool_inputs = [b.input for b in message.content if b.type == "tool_use" and b.name == tool_name]
    texts = [b.text for b in message.content if b.type == "text"]
    if not tool_inputs:
        return Completion(None, "".join(texts), message.model, **_usage(message.usage), parse_error="no_tool_call")
    data = tool_inputs[0]
    raw = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if not isinstance(data, dict):
        return Completion(None, raw, message.model, **_usage(message.usage), parse_error="not_object")
    return Completion(data, raw, message.model, **_usage(message.usage))


class AnthropicProvider(BaseProvider):
    name = "anthropic"
    streams = True

    def _client(self) -> anthropic.Anthropic:
        return _sdk_client(settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL or None)

    def _complete(self, request: LLMRequest, model: str, ends: float) -> Completion:
        params = request_params(request, model, remaining(ends))
        # The raw response first (headers only), so the body is read under the watchdog.
        with self._client().messages.with_streaming_response.create(**params) as response:
            with Watchdog(response.http_response, ends):
                message = response.parse()
        return completion_from_message(message, request.tool_name)

    def _stream(self, request: LLMRequest, model: str, draft: DraftStream, ends: float) -> Completion:
        params = request_params(request, model, remaining(ends))
        collector = _StreamCollector(request.tool_name, model, draft)
        with self._client().messages.create(**params, stream=True) as events:
            with Watchdog(events.response, ends) as watchdog:
                for event in events:
                    collector.add(event)
                    watchdog.check()
        return collector.completion()

    def _classify(self, exc: Exception) -> Failure | None:
        # Errors while reading a stream come straight from the SDK's transport (httpx2), unwrapped.
        if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            return Failure("timeout")
        if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
            return Failure("connection")
        if isinstance(exc, anthropic.APIStatusError):
            return failure_for_status(exc.status_code, parse_retry_after(exc.response.headers))
        if isinstance(exc, anthropic.APIResponseValidationError):
            return Failure("bad_response", final=True)
        return None


class _StreamCollector:
    """Rebuilds the reply from raw stream events; tool-input fragments also feed the draft."""

    def __init__(self, tool_name: str, model: str, draft: DraftStream) -> None:
        self.tool_name = tool_name
        self.model = model
        self.draft = draft
        self.tool_index: int | None = None
        self.tool_json: list[str] = []
        self.texts: list[str] = []
        self.usage: TokenCounts = {}

    def add(self, event: Any) -> None:
        if event.type == "message_start":
            self.model = event.message.model or self.model
            self.usage = _usage(event.message.usage)
        elif event.type == "content_block_start" and event.content_block.type == "tool_use":
            if self.tool_index is None and event.content_block.name == self.tool_name:
                self.tool_index = event.index
        elif event.type == "content_block_delta":
            self._delta(event)
        elif event.type == "message_delta" and event.usage is not None:
            self.usage = _merge(self.usage, _usage(event.usage))

    def _delta(self, event: Any) -> None:
        if event.delta.type == "input_json_delta" and event.index == self.tool_index:
            self.tool_json.append(event.delta.partial_json)
            self.draft.feed(event.delta.partial_json)
        elif event.delta.type == "text_delta":
            self.texts.append(event.delta.text)

    def completion(self) -> Completion:
        if self.tool_index is None:
            return Completion(None, "".join(self.texts), self.model, **self.usage, parse_error="no_tool_call")
        raw = "".join(self.tool_json)
        try:
            data = json.loads(raw or "{}")
        except ValueError:
            return Completion(None, raw, self.model, **self.usage, parse_error="invalid_json")
        if not isinstance(data, dict):
            return Completion(None, raw, self.model, **self.usage, parse_error="not_object")
        return Completion(data, raw, self.model, **self.usage)
