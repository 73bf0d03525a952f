import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chat.models import Conversation
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db


def _ask(*args):
    out = StringIO()
    call_command("ask", *args, stdout=out)
    return out.getvalue()


def test_json_output_is_exactly_the_contract(knowledge, shop):
    data = json.loads(_ask("demo", DELIVERY_QUESTION, "--json"))
    assert list(data) == ["text", "links", "buttons", "cards", "intent", "source", "flags", "timings"]
    assert data["links"] == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert data["source"] == knowledge["delivery"].pk
    assert data["buttons"] == [] and data["intent"] == "purchase"  # delivery is a purchase question
    assert set(data["flags"]) == {"low_confidence", "unanswered", "friction", "escalation"}
    # the steps the turn ran: without a model an answered turn also asks the speller (nothing to fix here)
    assert set(data["timings"]) == {"rules", "search", "llm", "spelling", "total"}
    assert all(isinstance(value, float) for value in data["timings"].values())


def test_no_answer_in_json_carries_the_operator_button(knowledge, shop):
    data = json.loads(_ask("demo", UNKNOWN_QUESTION, "--json"))
    assert data["source"] is None and data["links"] == []
    assert data["buttons"] == [{"id": "operator", "label": "Позвать оператора"}]
    assert data["flags"]["unanswered"] is True


def test_plain_output_prints_the_answer_and_its_link(knowledge, shop):
    out = _ask("demo", DELIVERY_QUESTION)
    assert "300 ₽" in out
    assert "→ Доставка: https://shop.example/delivery" in out


def test_each_question_starts_clean_even_after_a_handoff(shop):
    assert "оператора" in _ask("demo", "Соедините с оператором")
    assert _ask("demo", "Привет").strip() == "Здравствуйте! Чем могу помочь?"
    assert not Conversation.objects.exclude(state=Conversation.State.CLOSED).exists()


def test_an_unknown_bot_is_a_readable_error(shop):
    with pytest.raises(CommandError, match="не найден"):
        _ask("nope", "Привет")
