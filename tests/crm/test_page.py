"""`/b/<slug>/crm/`: the owner picks a CRM, pastes its address and key, and Spravka checks them with a
test call (the fake CRMs over real HTTP) before saving; bad input is named in Russian and nothing is
saved; «Проверить подключение» and «Отключить» work; the deliveries are listed and a failed one is
sent again; another owner's bot, and its deliveries, answer 404.

Tests owner/dashboard/views/crm.py; it stays here for tests/crm/conftest.py's fixtures (the fake CRMs, the
shop with a policy)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from chat.models import Lead
from crm import delivery, services
from crm.models import CrmConnection, CrmDelivery
from tests.fakes.amocrm_api import FakeAmoCRM
from tests.fakes.bitrix24_api import CODE, FakeBitrix24

pytestmark = pytest.mark.django_db


def _post(client: Client, slug: str, **fields: str) -> Any:
    return client.post(f"/b/{slug}/crm/", {f"crm-{name}": value for name, value in fields.items()})


def test_the_page_shows_how_to_connect(owner_client: Client, policy_shop: Any) -> None:
    page = owner_client.get(f"/b/{policy_shop.slug}/crm/").content.decode()
    assert "Куда отправлять заявки" in page and "не подключена" in page and "Проверить подключение и сохранить" in page


def test_amocrm_is_checked_then_saved_with_only_the_keys_end_shown(
    owner_client: Client, policy_shop: Any, fake_amocrm: FakeAmoCRM,
) -> None:
    answer = _post(owner_client, policy_shop.slug, kind="amocrm", amocrm_url=fake_amocrm.url,
                   amocrm_token=fake_amocrm.token)
    assert answer.status_code == 302
    connection = CrmConnection.objects.get(bot=policy_shop)
    assert connection.kind == "amocrm" and connection.account == fake_amocrm.url and connection.status == "active"
    assert fake_amocrm.token not in connection.secret_sealed and services.secret_of(connection) == fake_amocrm.token
    page = owner_client.get(f"/b/{policy_shop.slug}/crm/").content.decode()
    assert "Магазин «Справка»" in page and f"…{fake_amocrm.token[-4:]}" in page and fake_amocrm.token not in page
    assert [r.path for r in fake_amocrm.requests_to("/api/v4/account")] == ["/api/v4/account"]


def test_a_wrong_amocrm_token_is_named_and_nothing_saved(
    owner_client: Client, policy_shop: Any, fake_amocrm: FakeAmoCRM,
) -> None:
    answer = _post(owner_client, policy_shop.slug, kind="amocrm", amocrm_url=fake_amocrm.url,
                   amocrm_token="x" * 40)
    assert answer.status_code == 400
    assert "amoCRM не принимает ключ (ответ 401)" in answer.content.decode()
    assert not CrmConnection.objects.exists()


@pytest.mark.parametrize(("fields", "says"), [
    ({"kind": "amocrm", "amocrm_url": "", "amocrm_token": ""}, "Укажите адрес аккаунта amoCRM"),
    ({"kind": "amocrm", "amocrm_url": "ftp://shop.example", "amocrm_token": "t" * 30}, "Нужен адрес на https://"),
    ({"kind": "amocrm", "amocrm_url": "https://10.0.0.5", "amocrm_token": "t" * 30}, "во внутренней сети"),
    ({"kind": "amocrm", "amocrm_url": "https://company.amocrm.ru/leads/", "amocrm_token": "t" * 30}, "без пути"),
    ({"kind": "amocrm", "amocrm_url": "company", "amocrm_token": "не токен"}, "не похоже на долгосрочный токен"),
    ({"kind": "bitrix24", "bitrix24_url": "https://company.bitrix24.ru/crm/lead/"}, "Это не адрес входящего вебхука"),
    ({"kind": "bitrix24", "bitrix24_url": ""}, "Вставьте адрес входящего вебхука Битрикс24."),
    ({"kind": "salesforce"}, "Выберите CRM из списка."),
])
def test_bad_input_is_named_in_russian_and_nothing_saved(
    owner_client: Client, policy_shop: Any, settings: Any, fields: dict[str, str], says: str,
) -> None:
    settings.CRAWL_ALLOW_PRIVATE = False
    settings.CRM_ALLOW_HTTP = False
    answer = _post(owner_client, policy_shop.slug, **fields)
    assert answer.status_code == 400 and says in answer.content.decode()
    assert not CrmConnection.objects.exists()


def test_the_address_rules_read_what_owners_paste(settings: Any) -> None:
    settings.CRM_ALLOW_HTTP = False
    assert services.amocrm_base("Company") == "https://company.amocrm.ru"
    assert services.amocrm_base("company.amocrm.ru/") == "https://company.amocrm.ru"
    assert services.amocrm_base("https://shop.kommo.com") == "https://shop.kommo.com"
    assert services.bitrix24_webhook("https://b24.example.ru/rest/7/abc123xyz9/profile.json") == (
        "https://b24.example.ru/rest/7/abc123xyz9/", "https://b24.example.ru/rest/7/")


def test_bitrix24_is_checked_and_saved_and_can_be_checked_again_and_disconnected(
    owner_client: Client, policy_shop: Any, fake_bitrix24: FakeBitrix24,
) -> None:
    answer = _post(owner_client, policy_shop.slug, kind="bitrix24", bitrix24_url=fake_bitrix24.webhook)
    assert answer.status_code == 302
    connection = CrmConnection.objects.get(bot=policy_shop)
    assert connection.kind == "bitrix24" and CODE not in connection.account
    assert connection.secret_hint == f"…{CODE[-4:]}"
    page = owner_client.get(f"/b/{policy_shop.slug}/crm/").content.decode()
    assert CODE not in page

    fake_bitrix24.fail_next(401)
    page = owner_client.post(f"/b/{policy_shop.slug}/crm/check/", follow=True).content.decode()
    assert "Битрикс24 не принимает адрес вебхука (ответ 401)" in page
    connection.refresh_from_db()
    assert connection.status == "failing"
    page = owner_client.post(f"/b/{policy_shop.slug}/crm/check/", follow=True).content.decode()
    assert "Подключение работает: Битрикс24 ответила." in page
    connection.refresh_from_db()
    assert connection.status == "active"

    owner_client.post(f"/b/{policy_shop.slug}/crm/disconnect/")
    connection.refresh_from_db()
    assert connection.status == "disconnected" and connection.secret_sealed == ""


def test_picking_none_disconnects(owner_client: Client, amo: CrmConnection, policy_shop: Any) -> None:
    assert _post(owner_client, policy_shop.slug, kind="none").status_code == 302
    amo.refresh_from_db()
    assert amo.status == "disconnected"


def _failed_delivery(bot: Any, connection: CrmConnection) -> CrmDelivery:
    lead = Lead.objects.create(bot=bot, visitor_id="v_page", name="Мария <script>", phone="+79161234567",
                               consent_text="Согласен", consent_policy_url="https://shop.example/privacy/",
                               consented_at="2026-12-01T10:00:00Z")
    made = delivery.delivery_for_lead(lead_id=lead.pk)
    assert made is not None
    CrmDelivery.objects.filter(pk=made.pk).update(status="failed", attempts=3, error="amoCRM отвечает ошибкой 500")
    return CrmDelivery.objects.get(pk=made.pk)


def test_the_owner_sees_a_failed_delivery_and_sends_it_again(
    owner_client: Client, amo: CrmConnection, policy_shop: Any,
) -> None:
    failed = _failed_delivery(policy_shop, amo)
    page = owner_client.get(f"/b/{policy_shop.slug}/crm/").content.decode()
    assert "amoCRM отвечает ошибкой 500" in page and "Мария &lt;script&gt;" in page and "Мария <script>" not in page
    owner_client.post(f"/b/{policy_shop.slug}/crm/deliveries/{failed.pk}/retry/")
    failed.refresh_from_db()
    assert failed.status == "pending" and failed.attempts == 0


def test_another_owner_cannot_see_or_send_again_this_bots_deliveries(
    amo: CrmConnection, policy_shop: Any, other_bot: Any, other_owner: Any,
) -> None:
    failed = _failed_delivery(policy_shop, amo)
    client = Client()
    client.force_login(other_owner)
    assert client.get(f"/b/{policy_shop.slug}/crm/").status_code == 404
    assert client.post(f"/b/{other_bot.slug}/crm/deliveries/{failed.pk}/retry/").status_code == 404
    assert client.post(f"/b/{policy_shop.slug}/crm/deliveries/{failed.pk}/retry/").status_code == 404
    answer = client.post("/admin/crm/crmdelivery/", {"action": "send_again", "_selected_action": [failed.pk]})
    assert answer.status_code in (200, 302)
    assert client.get(f"/admin/crm/crmdelivery/{failed.pk}/change/").status_code == 404
    failed.refresh_from_db()
    assert failed.status == "failed" and failed.attempts == 3
