"""The order endpoint in the admin: secrets never shown back, «Проверить» against a real endpoint,
another owner's endpoint a 404."""

from __future__ import annotations

import pytest
from django.urls import reverse

from knowledge.catalog import secrets
from knowledge.catalog.models import OrderEndpoint, OrderLookup
from tests.knowledge.catalog import test_catalog

feed_server = test_catalog.feed_server  # the local feed server fixture, shared

pytestmark = pytest.mark.django_db


def _form(bot, template, **changes):
    data = {
        "bot": bot.pk, "enabled": "on", "url_template": template, "headers": "", "status_pointer": "/status",
        "date_pointer": "/delivery/date", "tracking_pointer": "/tracking_url", "phone_pointer": "",
        "email_pointer": "", "number_pattern": r"\d{4,12}", "sample_number": "48213",
    }
    return {**data, **changes}


def test_an_owner_connects_an_endpoint_and_the_secret_never_comes_back(client, owner, bot, shop_api):
    client.force_login(owner)
    response = client.post(reverse("admin:commerce_orderendpoint_add"),
                           _form(bot, shop_api.template, headers="X-Api-Key: s3cret-key-123\nX-Shop: 7"))
    assert response.status_code == 302, response.content.decode()[:2000]
    endpoint = OrderEndpoint.objects.get(bot=bot)
    assert secrets.unseal(endpoint.headers_token) == {"X-Api-Key": "s3cret-key-123", "X-Shop": "7"}
    page = client.get(reverse("admin:commerce_orderendpoint_change", args=[endpoint.pk])).content.decode()
    assert "s3cret-key-123" not in page and endpoint.headers_token not in page
    assert "Сохранены: X-Api-Key, X-Shop (значения скрыты)" in page
    assert "Проверить" in page
    listing = client.get(reverse("admin:commerce_orderendpoint_changelist")).content.decode()
    assert "X-Api-Key, X-Shop" in listing and "s3cret" not in listing


def test_saving_without_headers_keeps_them_and_a_bad_form_changes_nothing(client, owner, bot, endpoint):
    client.force_login(owner)
    url = reverse("admin:commerce_orderendpoint_change", args=[endpoint.pk])
    assert client.post(url, _form(bot, endpoint.url_template, status_pointer="/state")).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.status_pointer == "/state" and endpoint.header_names == ["X-Api-Key"]
    refused = client.post(url, _form(bot, "https://shop.example/orders", headers="broken line",
                                     number_pattern="(", status_pointer="state"))
    page = refused.content.decode()
    assert refused.status_code == 200
    assert "ровно одно место для номера" in page and "Строка 1" in page and "не JSON Pointer" in page
    endpoint.refresh_from_db()
    assert endpoint.status_pointer == "/state" and secrets.unseal(endpoint.headers_token) == {
        "X-Api-Key": "s3cret-key-123"}


def test_the_check_button_calls_the_endpoint_and_shows_the_result(client, owner, endpoint, shop_api):
    client.force_login(owner)
    url = reverse("admin:commerce_orderendpoint_check", args=[endpoint.pk])
    page = client.post(url, {"number": "48213"}).content.decode()
    assert "Передан в службу доставки" in page and "2026-12-05" in page
    assert "https://track.example/RU48213" in page and 'data-outcome="found"' in page
    assert shop_api.hits[-1][1]["x-api-key"] == "s3cret-key-123"
    missing = client.post(url, {"number": "99999"}).content.decode()
    assert 'data-outcome="not_found"' in missing
    html = client.post(url, {"number": "html"}).content.decode()
    assert 'data-outcome="unavailable"' in html and "вместо JSON пришла HTML-страница" in html
    assert list(OrderLookup.objects.order_by("id").values_list("result", "visitor_id")) == [
        ("found", f"admin:{owner.pk}"), ("not_found", f"admin:{owner.pk}"), ("unavailable", f"admin:{owner.pk}")]


def test_a_lookup_s_reason_reads_in_the_reader_s_language_on_the_check_and_in_the_log(client, owner, endpoint,
                                                                                     shop_api):
    client.force_login(owner)
    client.cookies["django_language"] = "en"
    url = reverse("admin:commerce_orderendpoint_check", args=[endpoint.pk])
    page = client.post(url, {"number": "html"}).content.decode()
    assert "an HTML page came instead of JSON" in page and "вместо JSON" not in page
    lookup = OrderLookup.objects.get()
    assert lookup.reason == "вместо JSON пришла HTML-страница"  # the Russian column, as before
    log = client.get(reverse("admin:commerce_orderlookup_changelist")).content.decode()
    assert "an HTML page came instead of JSON" in log
    OrderLookup.objects.create(bot=endpoint.bot, number="1", result="unavailable", reason="старая причина")
    client.cookies["django_language"] = "ru"
    log = client.get(reverse("admin:commerce_orderlookup_changelist")).content.decode()
    assert "вместо JSON пришла HTML-страница" in log and "старая причина" in log


def test_the_catalog_import_log_reads_in_english(client, owner, bot):
    from knowledge.catalog import catalog

    catalog.catalog_import_bytes(bot=bot, data=b"<yml_catalog><shop></shop></yml_catalog>", name="empty.xml")
    client.force_login(owner)
    client.cookies["django_language"] = "en"
    page = client.get(reverse("admin:commerce_catalogimport_changelist")).content.decode()
    assert "the feed has no product that can be shown" in page and "в фиде нет" not in page


def test_another_owner_cannot_check_or_open_the_endpoint(client, other_owner, other_bot, endpoint, shop_api):
    client.force_login(other_owner)
    check = reverse("admin:commerce_orderendpoint_check", args=[endpoint.pk])
    missing = reverse("admin:commerce_orderendpoint_check", args=[endpoint.pk + 1000])
    assert client.post(check, {"number": "48213"}).status_code == 404
    assert client.post(missing, {"number": "48213"}).status_code == 404
    assert client.get(reverse("admin:commerce_orderendpoint_change", args=[endpoint.pk])).status_code == 404
    assert shop_api.hits == [] and OrderLookup.objects.count() == 0


def test_an_owner_uploads_a_catalog_and_a_bad_one_changes_nothing(client, owner, bot, other_bot):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from knowledge.catalog.models import CatalogOffer
    from tests.knowledge.catalog.test_catalog import BILLION_LAUGHS, YML

    client.force_login(owner)
    url = reverse("admin:commerce_catalogimport_upload")
    page = client.get(url).content.decode()
    assert "Демо-магазин" in page and "Чужой магазин" not in page
    done = client.post(url, {"bot": bot.pk, "feed": SimpleUploadedFile("feed.xml", YML)}, follow=True)
    assert "Каталог загружен: добавлено 2, изменено 0, удалено 0, пропущено 3." in done.content.decode()
    refused = client.post(url, {"bot": bot.pk, "feed": SimpleUploadedFile("evil.xml", BILLION_LAUGHS)}, follow=True)
    text = refused.content.decode()
    assert "Каталог не загружен" in text and "объявлены свои сущности" in text
    assert CatalogOffer.objects.filter(bot=bot).count() == 2
    foreign = client.post(url, {"bot": other_bot.pk, "feed": SimpleUploadedFile("feed.xml", YML)})
    assert foreign.status_code == 200 and "Выберите корректный вариант" in foreign.content.decode()
    assert not CatalogOffer.objects.filter(bot=other_bot).exists()
    empty = client.post(url, {"bot": bot.pk})
    assert "Выберите файл или укажите адрес фида." in empty.content.decode()
    listing = client.get(reverse("admin:commerce_catalogoffer_changelist")).content.decode()
    assert "Пылесос Вихрь 100" in listing


def test_the_upload_form_schedules_a_feed_by_address_only(client, owner, bot, feed_server):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from knowledge.models import Source
    from tests.knowledge.catalog.test_catalog import YML

    client.force_login(owner)
    url = reverse("admin:commerce_catalogimport_upload")
    refused = client.post(url, {"bot": bot.pk, "feed": SimpleUploadedFile("feed.xml", YML), "every_hours": "6"})
    assert "По расписанию обновляется только фид по адресу" in refused.content.decode()
    assert not Source.objects.filter(bot=bot, kind="catalog").exists()  # nothing imported on a refused form
    done = client.post(url, {"bot": bot.pk, "url": f"{feed_server}/feed.xml", "every_hours": "6"}, follow=True)
    assert "Каталог загружен: добавлено 2" in done.content.decode()
    assert Source.objects.get(bot=bot, kind="catalog").recrawl_hours == 6
    listing = client.get(reverse("admin:commerce_catalogimport_changelist")).content.decode()
    assert "по расписанию" in listing.lower()


def test_invitation_rules_show_their_shows_and_conversions(client, owner, bot, other_bot):
    from behavior import invitations
    from behavior.models import InvitationRule

    mine = InvitationRule.objects.create(bot=bot, name="Пылесосы", text="Подобрать пылесос?", url_pattern="/catalog/*")
    theirs = InvitationRule.objects.create(bot=other_bot, name="Чужое приглашение", text="?")
    for visitor in ("v_1", "v_2", "v_3", "v_4"):
        invitations.invitation_show_record(bot=bot, visitor_id=visitor, rule_id=mine.pk)
    invitations.invitation_convert(bot_id=bot.pk, visitor_id="v_2", conversation_id=1)
    client.force_login(owner)
    listing = client.get(reverse("admin:behavior_invitationrule_changelist")).content.decode()
    assert "Пылесосы" in listing and "Чужое приглашение" not in listing
    assert '<td class="field-shown">4</td>' in listing and '<td class="field-converted">1</td>' in listing
    assert "25%" in listing
    assert client.get(reverse("admin:behavior_invitationrule_change", args=[theirs.pk])).status_code == 404
    added = client.post(reverse("admin:behavior_invitationrule_add"), {
        "bot": bot.pk, "name": "Уходит", "enabled": "on", "text": "Остались вопросы?", "url_pattern": "",
        "seconds_on_page": "0", "on_leave": "on", "once_per_days": "0", "show_on_mobile": "",
    })
    assert added.status_code == 200 and "Убедитесь, что это значение больше либо равно 1." in added.content.decode()
    assert not InvitationRule.objects.filter(name="Уходит").exists()
