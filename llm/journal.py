"""Writes to the run journal and the usage lines. The only place that creates these rows.

Details hold codes, counts and field paths, never prompt text or model output: the journal is
read by owners and support, and must not become a second copy of visitors' messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llm.budget import spent_add
from llm.models import RunEvent, Usage
from llm.pricing import estimate_cost

if TYPE_CHECKING:
    from llm.base import LLMRequest, LLMResult


def run_event_record(
    *,
    bot_id: int,
    kind: str,
    ok: bool,
    route: str = "",
    purpose: str = "",
    detail: dict[str, Any] | None = None,
    conversation_id: int | None = None,
    run_id: int | None = None,
) -> RunEvent:
    if kind not in RunEvent.Kind.values:
        raise ValueError(f"unknown run event kind {kind!r}")
    return RunEvent.objects.create(
        bot_id=bot_id, kind=kind, ok=ok, route=route, purpose=purpose,
        detail=detail or {}, conversation_id=conversation_id, run_id=run_id,
    )


def usage_record(*, bot_id: int, request: LLMRequest, result: LLMResult) -> Usage:
    cost = estimate_cost(
        result.model, input_tokens=result.input_tokens, output_tokens=result.output_tokens,
        cache_read_tokens=result.cache_read_tokens, cache_write_tokens=result.cache_write_tokens,
    )
    usage = Usage.objects.create(
        bot_id=bot_id, route=request.route, purpose=request.purpose, run_id=request.run_id, provider=result.provider,
        model=result.model, input_tokens=result.input_tokens, output_tokens=result.output_tokens,
        cache_read_tokens=result.cache_read_tokens, cache_write_tokens=result.cache_write_tokens,
        latency_ms=result.latency_ms, cost_usd=cost,
    )
    spent_add(bot_id=bot_id, cost=cost, at=usage.created_at)  # the month's cached total (budget.py)
    return usage


def llm_call_record(*, bot_id: int, request: LLMRequest, result: LLMResult) -> None:
    """One usage line and one journal row per model call, failed calls included. An async route
    commits them with what followed from the call (routes/engine.py); the chat turn as they come."""
    usage_record(bot_id=bot_id, request=request, result=result)
    detail: dict[str, Any] = {
        "provider": result.provider,
        "model": result.model,
        "model_class": request.model_class,
        "attempts": result.attempts,
        "latency_ms": result.latency_ms,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cache_read_tokens": result.cache_read_tokens,
    }
    for key in ("error", "status", "parse_error"):
        value = getattr(result, key)
        if value is not None:
            detail[key] = value
    run_event_record(
        bot_id=bot_id, kind=RunEvent.Kind.LLM_CALL, ok=result.ok, route=request.route,
        purpose=request.purpose, detail=detail, conversation_id=request.conversation_id, run_id=request.run_id,
    )
