"""The approval point and publishing: a person's approve / edit / reject (service and admin queue),
the deterministic approval-bypass guard, and approved replies published by a signed webhook to a
real local receiver by a real Celery worker."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest

from llm.models import RunEvent
from routes import approval, publishing
from routes.models import ReviewReplySettings, RouteRun
from routes.review_reply import review_reply_run
from tests.fakes.messages_api import tool_use, verdict

GOOD = "Здравствуйте! Спасибо за отзыв, рады, что платье подошло."


def _waiting(bot, review, fake_llm):
    fake_llm.script_tool("review_reply", tool_use({"reply": GOOD}))
    fake_llm.script_tool("verdict", verdict(0.8))
    run = review_reply_run(review=review)
    assert run.status == RouteRun.Status.WAITING
    return run


def _wait(run_id, status, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        run = RouteRun.objects.get(pk=run_id)
        if run.status == status:
            return run
        assert time.monotonic() < deadline, (run.status, run.publish_error)
        time.sleep(0.05)


@pytest.mark.django_db
def test_a_person_approves_edits_or_rejects_once(shop, knowledge, reviews, fake_llm, owner, other_bot):
    runs = [_waiting(shop, review, fake_llm) for review in reviews[:3]]
    ids = [shop.pk]
    approved = approval.approval_decide(run_id=runs[0].pk, bot_ids=ids, decision="approve", user=owner)
    edited = approval.approval_decide(run_id=runs[1].pk, bot_ids=ids, decision="edit", text=" Спасибо, Олег! ",
                                      user=owner)
    rejected = approval.approval_decide(run_id=runs[2].pk, bot_ids=ids, decision="reject", user=owner)
    assert (approved.status, approved.text) == (RouteRun.Status.APPROVED, GOOD)
    assert (edited.status, edited.text) == (RouteRun.Status.APPROVED, "Спасибо, Олег!")
    assert rejected.status == RouteRun.Status.REJECTED and not publishing.publish_allowed(rejected)
    with pytest.raises(approval.ApprovalError) as twice:
        approval.approval_decide(run_id=runs[0].pk, bot_ids=ids, decision="reject", user=owner)
    assert twice.value.status == 409
    with pytest.raises(approval.ApprovalError) as foreign:
        approval.approval_decide(run_id=runs[0].pk, bot_ids=[other_bot.pk], decision="approve", user=owner)
    assert foreign.value.status == 404
    with pytest.raises(approval.ApprovalError, match="Текст ответа пуст"):
        approval.approval_decide(run_id=runs[0].pk, bot_ids=ids, decision="edit", text="  ", user=owner)
    decisions = list(RunEvent.objects.filter(kind="approval", detail__decision__in=["approve", "edit", "reject"])
                     .values_list("detail__decision", flat=True))
    assert sorted(decisions) == ["approve", "edit", "reject"]


@pytest.mark.django_db
def test_publishing_refuses_a_run_nobody_approved(shop, knowledge, reviews, fake_llm, receiver):
    shop.webhook_url = receiver.url
    shop.save(update_fields=["webhook_url"])
    run = _waiting(shop, reviews[0], fake_llm)
    RouteRun.objects.filter(pk=run.pk).update(status=RouteRun.Status.APPROVED)  # approved by nobody
    assert publishing.reply_publish_attempt(run_id=run.pk, final=True) is True
    assert receiver.requests == [] and RouteRun.objects.get(pk=run.pk).published_at is None
    assert RunEvent.objects.get(run_id=run.pk, kind="publish").detail["reason"] == "not_approved"


@pytest.mark.django_db(transaction=True)
def test_an_auto_passed_reply_is_published_signed_to_the_owners_url(
    shop, knowledge, reviews, fake_llm, receiver, celery_worker_thread
):
    ReviewReplySettings.objects.update_or_create(
        bot=shop, defaults={"auto_pass": True, "auto_pass_min_score": 0.9, "publish_url": receiver.url}
    )
    fake_llm.script_tool("review_reply", tool_use({"reply": GOOD}))
    fake_llm.script_tool("verdict", verdict(0.95))
    run = review_reply_run(review=reviews[0])
    [(headers, body)] = receiver.wait_for(1)
    published = _wait(run.pk, RouteRun.Status.PUBLISHED)
    expected = "sha256=" + hmac.new(shop.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Spravka-Signature"] == expected and headers["X-Spravka-Event"] == "review.reply"
    data = json.loads(body)
    assert data["reply"] == GOOD and data["approved"] == "auto" and data["review"]["author"] == "Анна"
    assert published.publish_status == 200 and published.publish_attempts == 1


@pytest.mark.django_db(transaction=True)
def test_an_edited_reply_is_published_after_a_retry(shop, knowledge, reviews, fake_llm, owner, celery_worker_thread,
                                                    settings):
    from tests.fakes.receiver import Receiver

    settings.WEBHOOK_RETRY_BASE = 0.05
    flaky = Receiver(statuses=[503])
    try:
        ReviewReplySettings.objects.update_or_create(bot=shop, defaults={"publish_url": flaky.url})
        run = _waiting(shop, reviews[0], fake_llm)
        approval.approval_decide(run_id=run.pk, bot_ids=[shop.pk], decision="edit", text="Спасибо, Анна!", user=owner)
        flaky.wait_for(2)
        published = _wait(run.pk, RouteRun.Status.PUBLISHED)
        assert json.loads(flaky.requests[1][1])["reply"] == "Спасибо, Анна!" and published.publish_attempts == 2
    finally:
        flaky.stop()


@pytest.mark.django_db
def test_a_failed_publish_reads_in_the_reader_s_language_on_the_run_and_its_timeline(
    shop, knowledge, reviews, fake_llm, owner, client
):
    from django.urls import reverse
    from django.utils import translation

    from tests.fakes.receiver import Receiver

    refusing = Receiver(statuses=[404])
    try:
        ReviewReplySettings.objects.update_or_create(bot=shop, defaults={"publish_url": refusing.url})
        run = _waiting(shop, reviews[0], fake_llm)
        approval.approval_decide(run_id=run.pk, bot_ids=[shop.pk], decision="approve", user=owner)
        publishing.reply_publish_attempt(run_id=run.pk, final=True)
    finally:
        refusing.stop()
    failed = RouteRun.objects.get(pk=run.pk)
    assert (failed.status, failed.publish_error) == (RouteRun.Status.PUBLISH_FAILED, "ответ 404")
    with translation.override("en"):
        assert failed.publish_error_shown == "response 404"
    client.force_login(owner)
    client.cookies["django_language"] = "en"
    timeline = client.get(reverse("admin:routes_routerun_timeline", args=[run.pk])).content.decode()
    assert "response 404" in timeline and "ответ 404" not in timeline
    assert "approved by a reviewer" in timeline  # a code's words, translated when shown
    detail = client.get(reverse("admin:routes_routerun_change", args=[run.pk])).content.decode()
    assert "response 404" in detail
    RouteRun.objects.filter(pk=run.pk).update(publish_error="старая ошибка", publish_error_stored=None)
    assert RouteRun.objects.get(pk=run.pk).publish_error_shown == "старая ошибка"
