"""Structured replies: the answer schema, a small validator, and the one form repair.

Violations are field paths from the schema plus error codes, never values: the repair prompt must
not echo the model's (or a visitor's) text back, so a bad value cannot steer the second call and the
journal stays free of message text. One repair, then the reply counts as no model at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypedDict

from llm import journal
from llm.base import ChatMessage, LLMRequest, LLMResult, Provider, ReleaseRule, TextSink
from llm.models import RunEvent

ANSWER_TOOL = "answer"
INTENTS = ("question", "read", "product", "order", "operator", "smalltalk")
NO_SOURCE = -1


class Violation(TypedDict):
    path: str
    code: str


Validator = Callable[[Mapping[str, Any]], list[Violation]]


def answer_schema(source_count: int) -> dict[str, Any]:
    """The chat answer form. `source` comes before `answer` on purpose: the model commits to a
    source before writing, and a streamed draft can be released once the source is known."""
    return {
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": list(INTENTS)},
            "source": {"type": "integer", "minimum": NO_SOURCE, "maximum": source_count - 1},
            "answer": {"type": "string"},
            "product_query": {"type": "string"},
            "fixed": {"type": "string"},
        },
        "required": ["intent", "source", "answer", "product_query", "fixed"],
    }


def release_when_sourced(source_count: int) -> ReleaseRule:
    """Draft text may show only for an answer the chain would show as is: a settled, in-range source."""

    def release(settled: Mapping[str, Any]) -> bool:
        source = settled.get("source")
        return isinstance(source, int) and not isinstance(source, bool) and 0 <= source < source_count

    return release


# --- validation ---------------------------------------------------------------------------------

_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _is_type(value: object, expected: str | Sequence[str]) -> bool:
    names = [expected] if isinstance(expected, str) else list(expected)
    return any(_TYPES[name](value) for name in names)


def validate(value: object, schema: Mapping[str, Any], path: str = "$") -> list[Violation]:
    """The subset of JSON Schema our forms use: type, enum, minimum/maximum, min/maxLength,
    properties + required, items. Unknown keys in the reply are ignored, not reported: they cost
    nothing, and their names come from the model, so they could not appear in a path anyway."""
    if "type" in schema and not _is_type(value, schema["type"]):
        return [Violation(path=path, code="type")]
    if "enum" in schema and value not in schema["enum"]:
        return [Violation(path=path, code="enum")]
    found = _bounds(value, schema, path)
    if isinstance(value, dict):
        found += _object(value, schema, path)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += validate(item, schema["items"], f"{path}[{index}]")
    return found


def _bounds(value: object, schema: Mapping[str, Any], path: str) -> list[Violation]:
    checks: list[tuple[str, bool]] = []
    if _is_type(value, "number"):
        number = float(value)  # type: ignore[arg-type]
        checks += [("minimum", "minimum" in schema and number < schema["minimum"])]
        checks += [("maximum", "maximum" in schema and number > schema["maximum"])]
    if isinstance(value, str):
        checks += [("minLength", "minLength" in schema and len(value) < schema["minLength"])]
        checks += [("maxLength", "maxLength" in schema and len(value) > schema["maxLength"])]
    return [Violation(path=path, code=code) for code, failed in checks if failed]


def _object(value: Mapping[str, Any], schema: Mapping[str, Any], path: str) -> list[Violation]:
    found: list[Violation] = []
    prefix = "" if path == "$" else f"{path}."
    for name in schema.get("required", ()):
        if name not in value:
            found.append(Violation(path=f"{prefix}{name}", code="required"))
    for name, subschema in schema.get("properties", {}).items():
        if name in value:
            found += validate(value[name], subschema, f"{prefix}{name}")
    return found


def schema_validator(schema: Mapping[str, Any]) -> Validator:
    return lambda data: validate(data, schema)


def violations_of(result: LLMResult, check: Validator) -> list[Violation]:
    if result.data is None:
        return [Violation(path="$", code=result.parse_error or "invalid_json")]
    return check(result.data)


# --- form repair ----------------------------------------------------------------------------------


def repair_request(request: LLMRequest, violations: Sequence[Violation]) -> LLMRequest:
    """The original conversation plus one note listing paths and codes; the bad reply itself is
    not sent back (it would carry the offending values)."""
    lines = "\n".join(f"- {item['path']}: {item['code']}" for item in violations)
    note = ChatMessage(
        role="user",
        content=(
            "Предыдущий ответ не прошёл проверку формы. Нарушения (поле: код ошибки):\n"
            f"{lines}\n"
            f"Повторите ответ строго по схеме «{request.tool_name}»: "
            "все обязательные поля, нужные типы и допустимые значения."
        ),
    )
    return replace(request, messages=[*request.messages, note], purpose=f"{request.purpose}.form_repair")


def complete_with_repair(
    provider: Provider, request: LLMRequest, check: Validator, *, on_text_delta: TextSink | None = None
) -> LLMResult:
    """One call; if its form is invalid, one repair call; still invalid → data None, error
    "invalid_form", which the answer chain treats as "no model". Transport failures are returned
    as they are: repairing a form makes no sense when there is no reply."""
    if on_text_delta is not None:
        first = provider.stream_structured(request, on_text_delta)
    else:
        first = provider.complete_structured(request)
    if not first.ok:
        return first
    before = violations_of(first, check)
    if not before:
        return first
    # The repair is not streamed: a second draft would follow the first one on the same screen.
    second = provider.complete_structured(repair_request(request, before))
    after = violations_of(second, check) if second.ok else []
    _journal_repair(provider, request, before, second, after)
    if not second.ok:
        return second
    if after:
        return replace(second, data=None, error="invalid_form")
    return second


def _journal_repair(
    provider: Provider, request: LLMRequest, before: list[Violation], second: LLMResult, after: list[Violation]
) -> None:
    verdict_after = second.error or ("invalid" if after else "valid")
    journal.run_event_record(
        bot_id=provider.bot_id, kind=RunEvent.Kind.FORM_REPAIR, ok=verdict_after == "valid",
        route=request.route, purpose=request.purpose, conversation_id=request.conversation_id,
        run_id=request.run_id,
        detail={
            "verdict_before": "invalid",
            "violations_before": list(before),
            "verdict_after": verdict_after,
            "violations_after": list(after),
        },
    )
