"""The Django admin's sentences that carry a model's name read right in Russian.

Django puts a model's name, in the nominative, into its sentences («Выберите %s для изменения»,
«Добавить еще один %(verbose_name)s»), which gives «Выберите поправка для изменения». The Russian
catalog (locale/ru) says each of them with the name after a colon or in brackets, where no case is
needed, for every model at once; English keeps Django's own sentences.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import django
import pytest
from babel.messages.pofile import read_po
from django.contrib.auth import get_user_model
from django.urls import reverse

from chat.models import Conversation
from tests.test_translations import CYRILLIC, entries, key_of

RU = Path(__file__).resolve().parent.parent / "locale" / "ru" / "LC_MESSAGES" / "django.po"
DJANGO = Path(django.__file__).parent
# Placeholders that stand for a model's name (or names).
NAMES = ("%s", "%(name)s", "%(verbose_name)s", "%(verbose_name_plural)s", "%(model)s", "%(items)s",
         "%(object_name)s", "%(objects_name)s", "%(module_name)s", "%(model_name)s", "{name}")
H1 = re.compile(r"<h1>(.*?)</h1>", re.S)


def overrides() -> list:
    """The Russian catalog's entries for Django's own (English) msgids."""
    return [message for message in entries(RU) if not CYRILLIC.search(key_of(message)[1])]


def django_msgids() -> set[str]:
    found = set()
    catalogs = [*DJANGO.glob("contrib/*/locale/ru/LC_MESSAGES/django.po"),
                DJANGO / "conf" / "locale" / "ru" / "LC_MESSAGES" / "django.po"]
    for po in catalogs:
        with po.open("rb") as handle:
            found |= {message.id if isinstance(message.id, str) else message.id[0]
                      for message in read_po(handle, locale="ru") if message.id}
    return found


def test_every_override_is_a_sentence_django_still_has():
    """A Django upgrade that rewords a sentence would leave its override unused: the name would
    slip back into a case. This fails first."""
    assert len(overrides()) >= 25
    known = django_msgids()
    assert [key_of(message)[1] for message in overrides() if key_of(message)[1] not in known] == []


def test_no_override_puts_a_name_where_it_needs_a_case():
    """The name begins the sentence, follows a colon or stands in brackets: «Добавить: поправка»,
    «Удалить «Доставка» (поправка)?», never «Добавить поправка»."""
    problems = []
    for message in overrides():
        for form in (message.string if isinstance(message.string, tuple) else (message.string,)):
            for name in NAMES:
                for found in re.finditer(re.escape(name), form):
                    before = form[:found.start()].rstrip()
                    if before and not before.endswith((":", "(")):
                        problems.append(f"{form!r}: {name} after {before[-20:]!r}")
    assert not problems, "\n  ".join(["a model's name where Russian needs a case:", *problems])


@pytest.fixture
def admin_client(client, bot):
    user = get_user_model().objects.create_superuser("root@phrases.example", "root@phrases.example", "pw-root-12345")
    client.force_login(user)
    return client


def heading(client, url: str, language: str) -> str:
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, url
    found = H1.search(response.content.decode())
    assert found is not None, url
    return html.unescape(found.group(1)).strip()


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "expected"), [
    ("ru", {"bots": "Выберите для изменения: бот", "add": "Добавить: бот", "change": "Изменить: бот",
            "corrections": "Выберите для просмотра: поправка", "conversation": "Просмотр: разговор",
            "count": "Боты: 1", "another": "Добавить ещё: Часы работы операторов"}),
    ("en", {"bots": "Select bot to change", "add": "Add bot", "change": "Change bot",
            "corrections": "Select correction to view", "conversation": "View conversation",
            "count": "Bots: 1", "another": "Add another Operators' working hours"}),
])
def test_the_admins_headings_name_the_model_without_a_case_slip(admin_client, bot, language, expected):
    expected = dict(expected)
    conversation = Conversation.objects.create(bot=bot, visitor_id="v_phrases")
    got = {
        "bots": heading(admin_client, reverse("admin:bots_bot_changelist"), language),
        "add": heading(admin_client, reverse("admin:bots_bot_add"), language),
        "change": heading(admin_client, reverse("admin:bots_bot_change", args=[bot.pk]), language),
        "corrections": heading(admin_client, reverse("admin:review_correction_changelist"), language),
        "conversation": heading(admin_client, reverse("admin:chat_conversation_change", args=[conversation.pk]),
                                language),
    }
    page = admin_client.get(reverse("admin:bots_bot_changelist"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    paginator = re.search(r'<p class="paginator">(.*?)</p>', page, re.S)
    assert paginator is not None
    got["count"] = " ".join(html.unescape(paginator.group(1)).split())
    change = admin_client.get(reverse("admin:bots_bot_change", args=[bot.pk]), HTTP_ACCEPT_LANGUAGE=language)
    inlines = [json.loads(html.unescape(data)) for data in
               re.findall(r'data-inline-formset="([^"]*)"', change.content.decode())]
    adds = {inline["options"]["addText"] for inline in inlines}  # one per inline of the bot's page
    assert expected.pop("another") in adds, adds
    assert got == expected


@pytest.mark.django_db
def test_a_deletion_asks_in_russian_without_declining_the_name(admin_client, bot):
    page = admin_client.get(reverse("admin:bots_bot_delete", args=[bot.pk]), HTTP_ACCEPT_LANGUAGE="ru")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode())).split())
    assert "Удалить «Демо-магазин» (бот)? Будут удалены и все эти связанные объекты:" in text
