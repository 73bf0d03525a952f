"""The run journal as a person (or `manage.py journal --json`) reads it: one row per event with
run, step, kind, verdict_before, verdict_after and reason.

Verdicts are the judge's scores (0..1) or a word for what stood in for one: "not_checked" (the
judge did not answer), "blocked" (an output filter stopped the draft), "failed" (the model did not
answer). A judge row's verdict is its `verdict_after`; a repair row carries both.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.texts import shown
from llm.models import RunEvent
from llm.selectors import run_events

# Codes are what the journal stores; their words are translated when the timeline shows them.
REASONS: dict[str, str] = {
    "judge_unavailable": gettext_noop("проверка не выполнялась: модель-оценщик недоступна"),
    "budget_repairs": gettext_noop("бюджет ремонтов исчерпан"),
    "budget_time": gettext_noop("время шага исчерпано"),
    "below_threshold": gettext_noop("оценка ниже порога"),
    "approve": gettext_noop("одобрен контролёром"),
    "edit": gettext_noop("исправлен и одобрен контролёром"),
    "reject": gettext_noop("отклонён контролёром"),
    "auto_pass": gettext_noop("одобрен правилом автопропуска"),
    "not_approved": gettext_noop("публикация отказана: ответ никто не одобрил"),
}


def _reason(event: RunEvent) -> str:
    detail = event.detail or {}
    if event.kind == RunEvent.Kind.FILTER_BLOCK:
        return f"{detail.get('filter', '')}:{','.join(detail.get('codes', []))}"
    if event.kind == RunEvent.Kind.LLM_CALL:
        return str(detail.get("error") or detail.get("parse_error") or "")
    if event.kind == RunEvent.Kind.APPROVAL:
        return str(detail.get("reason") or detail.get("decision") or "")
    return str(detail.get("reason") or "")


def _verdicts(event: RunEvent) -> tuple[Any, Any]:
    detail = event.detail or {}
    if event.kind == RunEvent.Kind.JUDGE:
        return None, detail.get("score")
    if event.kind == RunEvent.Kind.CHECK_SKIPPED:
        return None, "not_checked"
    return detail.get("verdict_before"), detail.get("verdict_after")


def journal_row(event: RunEvent) -> dict[str, Any]:
    before, after = _verdicts(event)
    detail = event.detail or {}
    return {
        "run": event.run_id, "step": detail.get("step") or event.purpose.split(".")[0], "kind": event.kind,
        "verdict_before": before, "verdict_after": after, "reason": _reason(event),
        "purpose": event.purpose, "ok": event.ok, "at": event.created_at.isoformat(),
    }


def reason_text(event: RunEvent) -> str:
    """The reason in words, for the timeline page: a code's words, or the stored text (core/texts.py)
    a publish attempt left, in the active language."""
    said = (event.detail or {}).get("reason_stored")
    if said:
        return shown(said)
    code = _reason(event)
    head = code.split(":", 1)[0]
    return _(REASONS[head]) if head in REASONS else code


def journal_rows(*, bot_id: int, run_id: int | None = None) -> list[dict[str, Any]]:
    events = run_events(bot_id=bot_id, run_ids=[run_id] if run_id is not None else None)
    return [journal_row(event) for event in events]
