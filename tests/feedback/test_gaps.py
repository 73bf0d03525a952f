"""Gaps from real unanswered questions: grouped, counted, answered through correction memory,
hidden; `manage.py gaps --json` prints one topic per line."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from feedback import grouping
from feedback.gaps import gap_answer, gap_list, gaps_refresh
from feedback.models import Gap

pytestmark = pytest.mark.django_db

HELICOPTER = ["Есть ли у вас парковка для вертолёта?", "Можно ли посадить вертолёт на вашей парковке?"]
CAKE = "Можно ли у вас заказать свадебный торт?"


def test_unanswered_questions_are_grouped_and_counted(shop, knowledge, ask):
    for number, question in enumerate([*HELICOPTER, CAKE]):
        ask(shop, question, visitor=f"v{number}")
    assert gaps_refresh(bot=shop) == 3
    assert gaps_refresh(bot=shop) == 0  # idempotent: the cursor moved on
    rows = gap_list(bot_ids=[shop.pk])
    assert [(r["gap"].count, r["gap"].title) for r in rows] == [(2, HELICOPTER[0]), (1, CAKE)]
    assert rows[0]["examples"] == HELICOPTER[1:] and rows[0]["trend"][-1] == 2


def test_answering_a_gap_closes_it_and_later_questions_get_the_answer(shop, knowledge, ask, owner):
    ask(shop, HELICOPTER[0])
    gaps_refresh(bot=shop)
    gap = Gap.objects.get(bot=shop)
    gap_answer(gap=gap, answer="Вертолётной площадки у нас нет, приезжайте на машине.", user=owner)
    gap.refresh_from_db()
    assert gap.status == "answered" and gap.entry is not None and gap.entry.kind == "qa"
    _message, reply = ask(shop, "Есть у вас площадка для вертолёта?", visitor="later")
    assert reply.source_entry_id == gap.entry_id


def test_hiding_and_the_admin_page(client, owner, shop, knowledge, ask, other_owner):
    ask(shop, CAKE)
    client.force_login(owner)
    page = client.get(reverse("admin:feedback_gap_changelist"))
    assert page.status_code == 200 and CAKE in page.content.decode()
    gap = Gap.objects.get(bot=shop)
    empty = client.post(reverse("admin:feedback_gap_answer", args=[gap.pk]), {"answer": "  "}, follow=True)
    assert "пустой" in empty.content.decode()
    client.post(reverse("admin:feedback_gap_hide", args=[gap.pk]), {"hidden": "1"})
    gap.refresh_from_db()
    assert gap.status == "hidden" and gap.entry is None
    client.force_login(other_owner)
    assert client.post(reverse("admin:feedback_gap_hide", args=[gap.pk]), {"hidden": "0"}).status_code == 404


def test_gaps_command_prints_one_json_object_per_topic(shop, knowledge, ask):
    for number, question in enumerate(HELICOPTER):
        ask(shop, question, visitor=f"v{number}")
    out = StringIO()
    call_command("gaps", shop.slug, "--json", stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 1
    assert set(lines[0]) == {"id", "title", "count", "questions", "last_seen"}
    assert lines[0]["count"] == 2 and lines[0]["questions"] == HELICOPTER


def test_grouping_keeps_topics_apart_by_stems():
    questions = ["Есть ли подарочные сертификаты?", "Продаёте подарочные сертификаты?", "Работаете ли вы с оптовиками?"]
    labels = grouping.group([(grouping.stems(q), None) for q in questions])
    assert labels == [0, 0, 1]
