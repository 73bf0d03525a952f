"""No machine code in the admin's filters and lists: a column of codes without choices on its model
(a webhook event, a route, an LLM provider, a messenger API method) and the choices of a field
(a correction's origin) are offered and shown by their words, in the page's language.

The rows are tests/test_admin_walk.py's (two tenants, one row of every model), with the columns
set to the codes the code really writes; the pages are opened as a superuser and as an owner."""

from __future__ import annotations

import pytest
from django.contrib.admin.templatetags.admin_list import items_for_result
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.html import strip_tags

from chat.models import WebhookDelivery
from llm.models import RunEvent, Usage
from messengers.models import Delivery
from review.models import Correction
from routes.models import RouteRun
from tests.test_admin_walk import world  # noqa: F401  (the fixture: two tenants, a row of every model)

pytestmark = pytest.mark.django_db

# model, field, the code stored, its words in Russian, in English
CODES = [
    (Correction, "origin", "command", "из командной строки", "from the command line"),
    (WebhookDelivery, "event", "handoff.waiting", "посетитель ждёт оператора", "a visitor waits for an operator"),
    (Usage, "route", "chat", "Ответ в чате", "Chat answers"),
    (Usage, "provider", "openai", "OpenAI-совместимый", "OpenAI-compatible"),
    (RunEvent, "route", "gaps", "Объединение похожих вопросов в «Пробелах»", "Merging similar questions in Gaps"),
    (RouteRun, "route", "review_reply", "Ответ на отзыв покупателя", "Replies to customer reviews"),
    (Delivery, "method", "sendMessage", "сообщение", "message"),
]


def offered(response, field: str) -> list[str]:
    cl = response.context["cl"]
    specs = [spec for spec in cl.filter_specs
             if getattr(spec, "parameter_name", None) == field or getattr(spec, "field_path", None) == field]
    assert specs, f"no filter on {field}"
    return [str(choice["display"]) for spec in specs for choice in spec.choices(cl)]


def cells(response) -> list[str]:
    cl = response.context["cl"]
    return [strip_tags(str(cell)).strip() for row in cl.result_list for cell in items_for_result(cl, row, None)]


@pytest.fixture
def coded(world):  # noqa: F811
    for model, field, code, _ru, _en in CODES:
        model._default_manager.update(**{field: code})
    return world


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_filters_and_cells_show_words_for_codes(client, coded, lang):
    root = get_user_model().objects.create_superuser("root@walk.example", "root@walk.example", "pw-walk-12345")
    client.force_login(root)
    for model, field, code, russian, english in CODES:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=lang)
        words = russian if lang == "ru" else english
        choices = offered(response, field)
        assert words in choices, (url, choices)
        assert code not in choices, (url, choices)
        shown = cells(response)
        assert words in shown and code not in shown, (url, shown)


def test_an_owner_is_offered_only_the_codes_of_their_own_bots(client, coded):
    bots, _rows, users = coded
    WebhookDelivery.objects.filter(bot=bots["b"]).update(event="lead.created")
    client.force_login(users["owner_a"])
    response = client.get(reverse("admin:chat_webhookdelivery_changelist"))
    choices = offered(response, "event")
    assert "посетитель ждёт оператора" in choices and "посетитель оставил контакт" not in choices
