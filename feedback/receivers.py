"""The feedback layer listens to the review queue (review.signals): a decision that answers a Gap's
question answers the Gap, and taking it back opens the Gap again."""

from __future__ import annotations

from typing import Any

from review.signals import decision_saved, decision_undone


def on_decision_saved(sender: Any, *, bot_id: int, question_id: int | None, entry_id: int, **kwargs: Any) -> None:
    from feedback.gaps import gap_answered_by_review

    gap_answered_by_review(bot_id=bot_id, question_id=question_id, entry_id=entry_id)


def on_decision_undone(sender: Any, *, bot_id: int, entry_ids: list[int], **kwargs: Any) -> None:
    from feedback.gaps import gaps_reopened_by_review

    gaps_reopened_by_review(bot_id=bot_id, entry_ids=entry_ids)


def connect() -> None:
    decision_saved.connect(on_decision_saved, dispatch_uid="feedback.on_decision_saved")
    decision_undone.connect(on_decision_undone, dispatch_uid="feedback.on_decision_undone")
