"""Self-hosted models behind an OpenAI-compatible `/chat/completions` (vLLM, llama.cpp, Ollama...).

Structured output through `response_format: json_schema`, which these servers turn into
constrained decoding. System parts are joined into one system message, stable ones first, so
servers with automatic prefix caching can reuse the prefix. Plain httpx rather than the project's
crawler client: that one refuses private addresses by design, and a self-hosted model usually
lives on one. Timeouts are explicit on every request, and every reply is read under a
`deadline.Watchdog`: a call is over by its deadline however slowly the server sends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import httpx
from django.conf import settings

from llm.base import LLMRequest
from llm.call_loop import BaseProvider, Completion, TokenCounts
from llm.deadline import Watchdog, remaining
from llm.retry import Failure, failure_for_status, parse_retry_after
from llm.streaming import DraftStream


class HTTPStatus(Exception):
    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


class BadResponse(Exception):
    """The server answered 2xx with something that is not an OpenAI chat completion."""


@lru_cache(maxsize=1)
def _http() -> httpx.Client:
    return httpx.Client(follow_redirects=False)


def request_body(request: LLMRequest, model: str, *, stream: bool) -> dict[str, Any]:
    system = "\n\n".join(part.text for part in request.system)
    messages = [{"role": "system", "content": system}] if system else []
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": messages + [dict(message) for message in request.messages],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": request.tool_name, "schema": dict(request.schema)},
        },
    }
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    return body


def _usage(usage: dict[str, Any] | None) -> TokenCounts:
    usage = usage or {}
    details = usage.get("prompt_tokens_details") or {}
    return {
        "input_tokens": int(usage.get("prompt_tokens") or 0),
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "cache_read_tokens": int(details.get("cached_tokens") or 0),
    }


def completion_from_content(content: str, model: str, usage: TokenCounts) -> Completion:
    try:
        data = json.loads(content)
    except ValueError:
        return Completion(None, content, model, **usage, parse_error="invalid_json")
    if not isinstance(data, dict):
        return Completion(None, content, model, **usage, parse_error="not_object")
    return Completion(data, content, model, **usage)


class OpenAICompatibleProvider(BaseProvider):
    name = "openai"
    streams = True

    def _post(self, body: dict[str, Any], timeout: float) -> httpx.Request:
        url = settings.LLM_OPENAI_BASE_URL.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {settings.LLM_OPENAI_API_KEY}"} if settings.LLM_OPENAI_API_KEY else {}
        return _http().build_request("POST", url, json=body, headers=headers, timeout=timeout)

    def _complete(self, request: LLMRequest, model: str, ends: float) -> Completion:
        post = self._post(request_body(request, model, stream=False), remaining(ends))
        response = _http().send(post, stream=True)  # headers only: the body is read under the watchdog
        try:
            with Watchdog(response, ends):
                response.read()
        finally:
            response.close()
        _raise_for_status(response)
        content, served_by, usage = _parse_payload(response)
        return completion_from_content(content, served_by or model, usage)

    def _stream(self, request: LLMRequest, model: str, draft: DraftStream, ends: float) -> Completion:
        parts: list[str] = []
        usage: TokenCounts = {}
        post = self._post(request_body(request, model, stream=True), remaining(ends))
        response = _http().send(post, stream=True)
        try:
            _raise_for_status(response)
            with Watchdog(response, ends) as watchdog:
                for chunk in _sse_chunks(response):
                    watchdog.check()
                    model = chunk.get("model") or model
                    usage = _usage(chunk["usage"]) if chunk.get("usage") else usage
                    for choice in chunk.get("choices") or []:
                        text = (choice.get("delta") or {}).get("content") or ""
                        parts.append(text)
                        draft.feed(text)
        finally:
            response.close()
        return completion_from_content("".join(parts), model, usage)

    def _classify(self, exc: Exception) -> Failure | None:
        if isinstance(exc, httpx.TimeoutException):
            return Failure("timeout")
        if isinstance(exc, httpx.TransportError):
            return Failure("connection")
        if isinstance(exc, HTTPStatus):
            return failure_for_status(exc.status, exc.retry_after)
        if isinstance(exc, BadResponse):
            return Failure("bad_response", final=True)
        return None


def _raise_for_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise HTTPStatus(response.status_code, parse_retry_after(response.headers))


def _sse_chunks(response: httpx.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue
        data = line[len("data:"):].strip()
        if data == "[DONE]":
            return
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise BadResponse("stream chunk is not JSON") from exc
        if not isinstance(chunk, dict):
            raise BadResponse("stream chunk is not an object")
        yield chunk


def _parse_payload(response: httpx.Response) -> tuple[str, str, TokenCounts]:
    try:
        payload = response.json()
        content = payload["choices"][0]["message"].get("content") or ""
        return str(content), str(payload.get("model") or ""), _usage(payload.get("usage"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise BadResponse("not a chat completion") from exc
