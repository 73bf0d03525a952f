"""A review decision that answers a Gap's question answers the Gap; taking it back opens it again."""

from __future__ import annotations

import pytest

from feedback.gaps import gaps_refresh
from feedback.models import Gap
from review import services
from review.models import ReviewItem

pytestmark = pytest.mark.django_db

HELICOPTER = "Есть ли у вас парковка для вертолёта?"


def test_adding_the_answer_in_the_review_queue_answers_the_gap_and_undo_reopens_it(
    shop, knowledge, ask, owner, django_capture_on_commit_callbacks
):
    _message, reply = ask(shop, HELICOPTER)
    gaps_refresh(bot=shop)
    gap = Gap.objects.get(bot=shop)
    item = ReviewItem.objects.get(message=reply)
    with django_capture_on_commit_callbacks(execute=True):
        decided = services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="added",
                                              text="Вертолётной площадки у нас нет.", user=owner)
    gap.refresh_from_db()
    assert (gap.status, gap.entry_id) == (Gap.Status.ANSWERED, decided.entry_id)
    with django_capture_on_commit_callbacks(execute=True):
        services.review_item_undo(item_id=item.pk, bot_ids=[shop.pk], user=owner)
    gap.refresh_from_db()
    assert (gap.status, gap.entry_id) == (Gap.Status.OPEN, None)


def test_a_decision_on_another_question_leaves_the_gap_open(shop, knowledge, ask, owner,
                                                           django_capture_on_commit_callbacks):
    ask(shop, HELICOPTER)
    _message, other = ask(shop, "Продаёте ли вы свадебные торты?", visitor="v2")
    gaps_refresh(bot=shop)
    helicopter = Gap.objects.get(bot=shop, title=HELICOPTER)
    item = ReviewItem.objects.get(message=other)
    with django_capture_on_commit_callbacks(execute=True):
        services.review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="added", text="Тортов нет.",
                                    user=owner)
    helicopter.refresh_from_db()
    assert helicopter.status == Gap.Status.OPEN
