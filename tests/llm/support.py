"""Requests and replies the LLM tests share: a chat answer request with two numbered sources."""

from __future__ import annotations

from typing import Any

from llm.base import LLMRequest, SystemPart
from llm.structured import ANSWER_TOOL, answer_schema

RULES = "Вы — ассистент магазина. Факты — только из источников ниже, source — номер источника."
SOURCES = "Источники:\n[0] Доставка: по Москве на следующий день, 300 ₽.\n[1] Возврат: 14 дней."
QUESTION = "Сколько стоит доставка по Москве?"

VALID: dict[str, Any] = {
    "intent": "question",
    "source": 0,
    "answer": "Доставка по Москве стоит 300 ₽ и занимает один день.",
    "product_query": "",
    "fixed": QUESTION,
}


def answer_request(source_count: int = 2, **options: Any) -> LLMRequest:
    return LLMRequest(
        system=[SystemPart(RULES, stable=True), SystemPart(SOURCES)],
        messages=[{"role": "user", "content": QUESTION}],
        schema=answer_schema(source_count),
        tool_name=ANSWER_TOOL,
        tool_description="Ответ посетителю в заданной форме.",
        **options,
    )


def valid(**changes: Any) -> dict[str, Any]:
    return VALID | changes
