"""The admin pages of the routes through Django's whole stack: the queue's empty state, a decision
by POST, the timeline of a repaired run, English through gettext, and another tenant's run a 404."""

from __future__ import annotations

import pytest
from django.utils import translation

from routes.models import RouteRun
from routes.review_reply import review_reply_run
from tests.fakes.messages_api import tool_use, verdict

pytestmark = pytest.mark.django_db

QUEUE = "/admin/routes/routerun/queue/"


def _repaired_run(review, fake_llm):
    fake_llm.script_tool("review_reply", tool_use({"reply": "Спасибо."}), tool_use({"reply": "Олег, спасибо!"}))
    fake_llm.script_tool("verdict", verdict(0.3, "мимо отзыва"), verdict(0.92))
    return review_reply_run(review=review)


def test_the_queue_says_what_to_do_when_it_is_empty(client, owner, shop):
    client.force_login(owner)
    page = client.get(QUEUE)
    assert page.status_code == 200 and "Ответов, ждущих решения, нет" in page.content.decode()


def test_a_decision_by_post_moves_to_the_next_reply(client, owner, shop, knowledge, reviews, fake_llm):
    run = _repaired_run(reviews[1], fake_llm)
    client.force_login(owner)
    page = client.get(QUEUE).content.decode()
    assert "Олег, спасибо!" in page and "Ответ 1 из 1" in page and "оценка 0,92" in page
    empty = client.post(f"/admin/routes/routerun/{run.pk}/decide/", {"decision": "edit", "text": " "}, follow=True)
    assert "Текст ответа пуст" in empty.content.decode()
    done = client.post(f"/admin/routes/routerun/{run.pk}/decide/", {"decision": "reject"}, follow=True)
    assert "Ответ отклонён" in done.content.decode() and "Ответов, ждущих решения, нет" in done.content.decode()
    assert RouteRun.objects.get(pk=run.pk).status == RouteRun.Status.REJECTED
    again = client.post(f"/admin/routes/routerun/{run.pk}/decide/", {"decision": "approve"}, follow=True)
    assert "уже принято решение" in again.content.decode()


def test_the_timeline_shows_both_verdicts_and_every_billing_line(client, owner, shop, knowledge, reviews, fake_llm):
    run = _repaired_run(reviews[1], fake_llm)
    client.force_login(owner)
    page = client.get(f"/admin/routes/routerun/{run.pk}/timeline/").content.decode()
    assert "0,3 → 0,92" in page and "смена подхода" in page and "claude-sonnet-4-6 (strong)" in page
    assert page.count("<td>draft") == 4  # draft, draft.judge, draft.approach, draft.approach.judge


def test_another_tenants_run_is_a_404_like_a_missing_one(client, other_owner, other_bot, shop, knowledge, reviews,
                                                          fake_llm):
    run = _repaired_run(reviews[1], fake_llm)
    client.force_login(other_owner)
    assert client.get(f"/admin/routes/routerun/{run.pk}/timeline/").status_code == 404
    assert client.get("/admin/routes/routerun/99999/timeline/").status_code == 404
    assert client.post(f"/admin/routes/routerun/{run.pk}/decide/", {"decision": "approve"}).status_code == 404
    assert "Ответов, ждущих решения, нет" in client.get(QUEUE).content.decode()
    assert RouteRun.objects.get(pk=run.pk).status == RouteRun.Status.WAITING


def test_the_queue_speaks_english_through_gettext(client, owner, shop, settings):
    client.force_login(owner)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    try:
        page = client.get(QUEUE).content.decode()
    finally:
        translation.activate(settings.LANGUAGE_CODE)  # the middleware left English active in this thread
    assert "Decision queue" in page and "No replies are waiting for a decision" in page
