"""Stored addresses are web addresses: `javascript:` and every other scheme is refused with a
message a person understands, by the admin forms and by the services, and nothing is saved."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from bots.models import Bot
from core.validators import validate_link, validate_origins, validate_web_url
from knowledge.drafts import EntryDraft
from knowledge.exceptions import RowsInvalid
from knowledge.importing import passages_load
from knowledge.models import Entry, Source
from knowledge.services import entry_upsert, source_get_or_create
from tests.bots.admin_forms import bot_form_data

BAD = ["javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "data:text/html,<b>x</b>",
       "vbscript:msgbox", "ftp://files.example/", "file:///etc/passwd", "//evil.example/", "/\\evil.example",
       "http://", "https://shop.example/\x00", "/путь с пробелом"]


@pytest.mark.parametrize("value", BAD)
def test_a_link_is_http_https_or_a_path_on_the_site(value):
    with pytest.raises(ValidationError) as caught:
        validate_link(value)
    assert "нужен адрес на http:// или https://" in caught.value.messages[0]


@pytest.mark.parametrize("value", ["", "/delivery/", "/xquad/a00p00/", "https://shop.example/dostavka/?a=1#b",
                                   "http://127.0.0.1:8000/faq/"])
def test_good_links_pass(value):
    validate_link(value)


@pytest.mark.parametrize("value", ["/delivery/", "javascript:alert(1)", "ftp://files.example/"])
def test_a_site_or_source_address_must_be_absolute_http_or_https(value):
    with pytest.raises(ValidationError, match="нужен полный адрес на http:// или https://"):
        validate_web_url(value)


@pytest.mark.parametrize("value", [["https://shop.example/"], ["javascript:alert(1)"], "https://shop.example", [1],
                                   ["https://shop.example/path"]])
def test_widget_origins_are_bare_http_or_https_origins(value):
    with pytest.raises(ValidationError):
        validate_origins(value)


def test_a_long_refused_value_is_quoted_short():
    with pytest.raises(ValidationError) as caught:
        validate_link("javascript:" + "a" * 5000)
    assert len(caught.value.messages[0]) < 400



@pytest.mark.django_db
def test_the_services_refuse_a_javascript_link_and_write_nothing(bot):
    with pytest.raises(ValidationError):
        entry_upsert(bot=bot, source=None, draft=EntryDraft(key="k", title="t", text="x", url="javascript:alert(1)"))
    with pytest.raises(ValidationError):
        source_get_or_create(bot=bot, kind="site", url="javascript:alert(1)")
    assert not Entry.objects.filter(bot=bot).exists() and not Source.objects.filter(bot=bot).exists()


@pytest.mark.django_db
def test_a_passage_file_with_a_javascript_link_names_the_line_and_loads_nothing(bot):
    lines = [{"id": "1", "text": "Доставка", "url": "/delivery/"},
             {"id": "2", "text": "x", "url": "javascript:alert(1)"}]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    with pytest.raises(RowsInvalid) as caught:
        passages_load(bot=bot, filename="kb.jsonl", data=data)
    assert "строка 2: поле «url»: Ссылка «javascript:alert(1)» не подходит" in str(caught.value)
    assert not Entry.objects.filter(bot=bot).exists()


ENTRY_FORM = {"kind": "qa", "title": "Возврат", "heading_path": "", "text": "14 дней.", "weight": "0.5",
              "active": "on", "source": ""}


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x"])
def test_the_entry_form_refuses_the_link_and_keeps_the_saved_entry(client, owner, bot, url):
    entry = Entry.objects.create(bot=bot, kind="qa", title="Возврат", text="14 дней.", url="/returns/")
    client.force_login(owner)
    response = client.post(reverse("admin:knowledge_entry_change", args=[entry.pk]),
                           {**ENTRY_FORM, "bot": bot.pk, "url": url})
    assert response.status_code == 200
    assert "не подходит: нужен адрес на http:// или https://" in response.content.decode()
    entry.refresh_from_db()
    assert entry.url == "/returns/"


@pytest.mark.django_db
def test_the_source_form_refuses_ftp_and_javascript(client, owner, bot):
    client.force_login(owner)
    for url in ("ftp://files.example/", "javascript:alert(1)"):
        response = client.post(reverse("admin:knowledge_source_add"),
                               {"bot": bot.pk, "kind": "site", "url": url, "title": "x", "recrawl_hours": ""})
        assert response.status_code == 200, url
    assert not Source.objects.exists()


@pytest.mark.django_db
def test_the_bot_form_refuses_a_bad_site_and_bad_origins(client, owner, bot):
    client.force_login(owner)
    for site, origins, message in (
        ("ftp://shop.example/", '["https://shop.example"]', "нужен полный адрес на http:// или https://"),
        ("https://shop.example/", '["javascript:alert(1)"]', "нужен адрес вида https://shop.example"),
        ("https://shop.example/", '["https://shop.example/"]', "без пути и косой черты в конце"),
    ):
        response = client.post(reverse("admin:bots_bot_change", args=[bot.pk]),
                               {**bot_form_data(bot), "site_url": site, "allowed_origins": origins})
        assert response.status_code == 200 and message in response.content.decode(), (site, origins)
    assert Bot.objects.get(pk=bot.pk).site_url == "http://127.0.0.1/"
