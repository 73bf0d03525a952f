"""The weekly digest through a real SMTP server (aiosmtpd), sent by the command and by the Celery
task on a real worker; outcomes and the charts page."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from chat.models import Conversation
from feedback.digest import digest_period
from feedback.models import Outcome
from feedback.outcomes import outcomes_refresh
from tests.review.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION


def _last_week(shop):
    """Move every conversation and message into last week's period, as if the visitors came then."""
    from chat.models import Message
    from feedback.models import GapQuestion

    start, _end = digest_period()
    moment = datetime.combine(start, time.min, timezone.get_current_timezone()) + timedelta(days=2)
    Conversation.objects.filter(bot=shop).update(created_at=moment, updated_at=moment)
    Message.objects.filter(bot=shop).update(created_at=moment)
    GapQuestion.objects.filter(bot=shop).update(asked_at=moment)


@pytest.mark.django_db
def test_outcomes_follow_what_happened(shop, knowledge, ask):
    ask(shop, DELIVERY_QUESTION, visitor="answered")
    ask(shop, UNKNOWN_QUESTION, visitor="abandoned")
    ask(shop, UNKNOWN_QUESTION, visitor="handed")
    ask(shop, "соедините с оператором", visitor="handed")
    later = timezone.now() + timedelta(hours=1)
    assert outcomes_refresh(bot=shop, now=later) == 3
    kinds = dict(Outcome.objects.values_list("conversation__visitor_id", "kind"))
    assert kinds == {"answered": "answered", "abandoned": "abandoned", "handed": "handed_off"}
    assert outcomes_refresh(bot=shop, now=later) == 0


@pytest.mark.django_db
def test_the_charts_page_has_three_charts_and_an_empty_state(client, owner, shop, knowledge, ask):
    client.force_login(owner)
    empty = client.get(reverse("admin:feedback_outcome_changelist")).content.decode()
    assert "Пока нет проверенных ответов" in empty and "chart.umd.min.js" in empty
    ask(shop, UNKNOWN_QUESTION)
    from review.models import ReviewItem
    from review.services import review_item_decide

    item = ReviewItem.objects.get(bot=shop)
    review_item_decide(item_id=item.pk, bot_ids=[shop.pk], decision="correct")
    page = client.get(reverse("admin:feedback_outcome_changelist"), {"bot": shop.pk})
    assert page.context["stats"]["accuracy"][-1] == 1.0 and page.context["stats"]["gaps"][-1] == 1
    assert 'id="chart-accuracy"' in page.content.decode() and 'id="chart-gaps"' in page.content.decode()


@pytest.mark.django_db
def test_senddigest_mails_owners_html_and_text(smtp_server, shop, knowledge, ask, owner):
    ask(shop, DELIVERY_QUESTION, visitor="a")
    ask(shop, UNKNOWN_QUESTION, visitor="b")
    _last_week(shop)
    out = StringIO()
    call_command("senddigest", shop.slug, stdout=out)
    assert "отправлена 1" in out.getvalue()
    (mail,) = smtp_server.wait_for(1)
    assert mail["To"] == owner.email and "Spravka: неделя" in mail["Subject"]
    text = mail.get_body(("plain",)).get_content()
    html = mail.get_body(("html",)).get_content()
    assert "Разговоров: 2" in text and "Бот ответил сам: 50%" in text and UNKNOWN_QUESTION in text
    from review.selectors import pending_count

    assert pending_count(bot=shop) >= 1
    assert f"Очередь проверки: {pending_count(bot=shop)}" in html and "/admin/review/reviewitem/" in html


@pytest.mark.django_db(transaction=True)
def test_the_weekly_task_sends_once_on_a_real_worker(smtp_server, celery_worker_thread, owner):
    from bots.models import Bot, Membership
    from feedback.tasks import send_digests

    bot = Bot.objects.create(name="Тихий магазин", slug="quiet")
    Membership.objects.create(bot=bot, user=owner, role=Membership.Role.OWNER)
    send_digests.delay()
    (mail,) = smtp_server.wait_for(1)
    assert "Тихий магазин" in mail["Subject"] and "разговоров не было" in mail.get_body(("plain",)).get_content()
    send_digests.delay()  # the same week again: logged once, not sent twice
    import time as clock

    clock.sleep(2)
    assert len(smtp_server.messages) == 1
