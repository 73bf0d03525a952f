"""The approval point of the review-reply route: the owner's auto-pass rule and a person's decision.

What must stay true (docs/architecture.md, "Routes with a judge"; the route's first trial failed
exactly here, 8 of 10 went out unreviewed):
- the auto-pass rule applies only to a checked result (a judge verdict at or above the threshold)
  of a run that is not manual; a skipped check or a spent budget makes the run manual, and a manual
  run waits for a person whatever the rule says;
- approval bypass is a deterministic check in code (`publishing.publish_allowed`), not a model's
  opinion: publishing refuses a run nobody approved;
- a decision is taken once: a second click on an already decided run is an error, not a re-publish.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from llm import journal
from llm.models import RunEvent
from routes import publishing
from routes.models import ReviewReplySettings, RouteRun

APPROVE: Final = "approve"
EDIT: Final = "edit"
REJECT: Final = "reject"
DECISIONS: Final = (APPROVE, EDIT, REJECT)
EDIT_MAX_CHARS: Final = 2000


class ApprovalError(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


@dataclass(frozen=True)
class RuleCheck:
    allowed: bool
    reason: str  # why not (a code), or "" when allowed


def auto_pass_check(*, run: RouteRun, owner: ReviewReplySettings) -> RuleCheck:
    """The owner's rule, after the hard guards that no rule can switch off."""
    if run.manual:
        return RuleCheck(False, "manual_run")
    if not run.checked or run.score is None:
        return RuleCheck(False, "unchecked")
    if not owner.auto_pass:
        return RuleCheck(False, "rule_off")
    review = run.review
    if review is None or review.rating < owner.auto_pass_min_rating:
        return RuleCheck(False, "rating")
    if run.score < owner.auto_pass_min_score:
        return RuleCheck(False, "score")
    if owner.auto_pass_no_facts and run.has_facts:
        return RuleCheck(False, "has_facts")
    return RuleCheck(True, "")


def _journal(run: RouteRun, *, ok: bool, **detail: Any) -> None:
    journal.run_event_record(
        bot_id=run.bot_id, kind=RunEvent.Kind.APPROVAL, ok=ok, route=run.route, purpose="approval", run_id=run.pk,
        detail={"step": "approval", **detail},
    )


def approval_arrive(*, run: RouteRun, owner: ReviewReplySettings) -> RouteRun:
    """A run reaches the approval point (inside the caller's transaction): auto-pass or wait."""
    rule = auto_pass_check(run=run, owner=owner)
    if not rule.allowed:
        _journal(run, ok=True, decision="waiting", manual=run.manual, reason=run.manual_reason or rule.reason)
        return run
    run.status, run.auto_passed, run.decided_at = RouteRun.Status.APPROVED, True, timezone.now()
    run.save(update_fields=["status", "auto_passed", "decided_at"])
    _journal(run, ok=True, decision="auto_pass", score=run.score)
    _publish_after_commit(run)
    return run


def _publish_after_commit(run: RouteRun) -> None:
    transaction.on_commit(lambda: publishing.reply_publish.delay(run.pk))


def approval_decide(*, run_id: int, bot_ids: Iterable[int], decision: str, text: str = "", user: Any) -> RouteRun:
    """A person's decision on a waiting run: approve (the draft), edit (their text), reject."""
    if decision not in DECISIONS:
        raise ApprovalError("bad_decision", _("Неизвестное решение: выберите «Одобрить», «Исправить» или «Отклонить»."))
    text = text.strip()
    if decision == EDIT and not text:
        raise ApprovalError("empty_text", _("Текст ответа пуст: напишите ответ или выберите «Одобрить» черновик."))
    if len(text) > EDIT_MAX_CHARS:
        raise ApprovalError("too_long", _("Ответ длиннее %(n)s знаков.") % {"n": EDIT_MAX_CHARS})
    with transaction.atomic():
        run = RouteRun.objects.select_for_update().filter(pk=run_id, bot_id__in=list(bot_ids)).first()
        if run is None:
            raise ApprovalError("not_found", _("Ответ не найден."), status=404)
        if run.status != RouteRun.Status.WAITING:
            raise ApprovalError("already_decided", _("По этому ответу уже принято решение."), status=409)
        run.decided_by, run.decided_at = user, timezone.now()
        if decision == REJECT:
            run.status, run.finished_at = RouteRun.Status.REJECTED, timezone.now()
        else:
            run.status = RouteRun.Status.APPROVED
            run.final_text = text if decision == EDIT else ""
        run.save(update_fields=["decided_by", "decided_at", "status", "finished_at", "final_text"])
        _journal(run, ok=decision != REJECT, decision=decision, manual=run.manual, edited=decision == EDIT)
        if decision != REJECT:
            _publish_after_commit(run)
    return run
