"""The owner's CRM page in a real browser against the real app (uvicorn on the test database), every
call to amoCRM made over real HTTP to the local fake (tests/fakes/amocrm_api.py):

- only the picked CRM's fields are shown, picked by keyboard alone;
- a key amoCRM refuses is explained under the field and nothing is saved; the right one shows the
  account and the key's last four characters only; «Проверить подключение» calls amoCRM again;
- the last leads sent are listed with their status and error, a failed one is sent again with
  «Отправить ещё раз»; «Отключить CRM» forgets the key; the English page speaks English.

Refresh docs/screenshots/crm-settings.png with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_crm_live.py"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect
from pytest_django import DjangoDbBlocker

from bots.models import Bot, Membership
from chat.models import Lead
from crm.models import CrmConnection, CrmDelivery
from tests.e2e.conftest import owner_page, serving_app
from tests.fakes.amocrm_api import FakeAmoCRM

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "e2e-crm-pass-1"


@pytest.fixture(scope="module")
def amocrm() -> Iterator[FakeAmoCRM]:
    fake = FakeAmoCRM().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def app(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    """The real app; CRAWL_ALLOW_PRIVATE (the tests' setting) lets it reach the fake on 127.0.0.1 over http."""
    with serving_app(django_db_blocker, CRAWL_ALLOW_PRIVATE="1", CRM_ALLOW_HTTP="1") as url:
        yield url


@pytest.fixture
def owner_bot(app: str, django_user_model: Any) -> Iterator[Bot]:
    bot = Bot.objects.create(name="ТехноДом", slug="e2e-crm", site_url="https://tehnodom.example/",
                             privacy_policy_url="https://tehnodom.example/privacy/")
    user = django_user_model.objects.create_user("owner@crm.example", email="owner@crm.example", password=PASSWORD)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    yield bot
    bot.delete()
    user.delete()


def sign_in(page: Page, app: str, next_path: str) -> None:
    page.goto(f"{app}/accounts/login/?next={next_path}")
    page.fill("#id_username", "owner@crm.example")
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{app}{next_path}")
    page.wait_for_load_state("load")


def _sent(bot: Bot, account: str) -> CrmDelivery:
    """Two leads as the worker leaves them: one delivered, one failed for good."""
    def lead(name: str, phone: str) -> Lead:
        return Lead.objects.create(bot=bot, visitor_id=f"v_{phone[-4:]}", name=name, phone=phone,
                                   consent_text="Согласен", consent_policy_url=bot.privacy_policy_url,
                                   consented_at=timezone.now())

    CrmDelivery.objects.create(bot=bot, lead=lead("Мария", "+79161234567"), kind="amocrm", account=account,
                               status="delivered", attempts=1, crm_lead_id="31000001", transcript_sent=True,
                               response_status=200, delivered_at=timezone.now())
    return CrmDelivery.objects.create(
        bot=bot, lead=lead("Иван", "+79035550011"), kind="amocrm", account=account, status="failed", attempts=6,
        response_status=500, error="amoCRM отвечает ошибкой 500 — попытки кончились, отправка остановлена. Заявка "
        "сохранена в Справке; когда CRM заработает, нажмите «Отправить ещё раз».")


def test_the_owner_connects_amocrm_checks_it_sends_a_lead_again_and_disconnects(
    browser: Browser, app: str, owner_bot: Bot, amocrm: FakeAmoCRM, shots: Path,
) -> None:
    path = f"/b/{owner_bot.slug}/crm/"
    with owner_page(browser, app) as page:
        sign_in(page, app, path)
        expect(page.locator("h1")).to_have_text("CRM")
        badge = page.locator("#crm-status h2 .badge")
        expect(badge).to_have_text("не подключена")
        amo_fields, bitrix_fields = page.locator(".crm-fields[data-kind=amocrm]"), page.locator(
            ".crm-fields[data-kind=bitrix24]")
        expect(amo_fields).to_be_hidden()
        expect(bitrix_fields).to_be_hidden()

        # Picked by keyboard: the first radio focused, arrows move to amoCRM.
        page.locator("#id_crm-kind_0").focus()
        page.keyboard.press("ArrowRight")
        expect(page.locator("#id_crm-kind_1")).to_be_checked()
        expect(amo_fields).to_be_visible()
        expect(bitrix_fields).to_be_hidden()

        # A key amoCRM refuses (401): said under the field, nothing saved.
        page.fill("#id_crm-amocrm_url", amocrm.url)
        page.fill("#id_crm-amocrm_token", "x" * 40)
        page.get_by_role("button", name="Проверить подключение и сохранить").click()
        expect(page.locator("#amocrm_token-errors")).to_contain_text("amoCRM не принимает ключ (ответ 401)")
        expect(amo_fields).to_be_visible()  # the picked CRM stays picked
        assert not CrmConnection.objects.filter(bot=owner_bot).exists()

        # The right one: checked with amoCRM, saved, the account named, the key's end only.
        page.fill("#id_crm-amocrm_token", amocrm.token)
        page.get_by_role("button", name="Проверить подключение и сохранить").click()
        expect(page).to_have_url(f"{app}{path}")
        expect(page.locator(".messages")).to_contain_text("amoCRM подключена")
        expect(badge).to_have_text("подключена")
        expect(page.locator("#crm-status dl.facts")).to_contain_text("Магазин «Справка»")
        expect(page.locator("#crm-status dl.facts")).to_contain_text("…" + amocrm.token[-4:])
        assert amocrm.token not in page.content()

        page.get_by_role("button", name="Проверить подключение", exact=True).click()
        expect(page.locator(".messages")).to_contain_text("Подключение работает: amoCRM ответила.")
        assert len(amocrm.requests_to("/api/v4/account", ok=True)) == 2

        failed = _sent(owner_bot, CrmConnection.objects.get(bot=owner_bot).account)
        page.reload()
        row = page.locator(f"#delivery-{failed.pk}")
        expect(row).to_contain_text("не доставлено")
        expect(row).to_contain_text("попытки кончились")
        page.wait_for_load_state("load")
        page.screenshot(path=str(shots / "crm-settings.png"), full_page=True)

        row.get_by_role("button", name="Отправить ещё раз").focus()
        page.keyboard.press("Enter")
        expect(page.locator(".messages")).to_contain_text("Заявка «Иван» поставлена в очередь.")
        failed.refresh_from_db()
        assert failed.status in ("pending", "sending", "delivered") and failed.attempts <= 1

        with owner_page(browser, app, locale="en-US") as english:
            session = next(c["value"] for c in page.context.cookies(app) if c["name"] == "sessionid")
            english.context.add_cookies([{"name": "sessionid", "value": session, "url": app}])
            english.set_extra_http_headers({"Accept-Language": "en-US,en"})
            english.goto(f"{app}{path}")
            expect(english.locator("h1")).to_have_text("CRM")
            expect(english.locator("#crm-status h2 .badge")).to_have_text("connected")
            expect(english.get_by_role("button", name="Check the connection", exact=True)).to_be_visible()
            expect(english.locator("#crm-connect legend").first).to_have_text("Where to send leads")
            expect(english.locator(f"#delivery-{failed.pk}")).to_contain_text("waiting to be sent")

        page.get_by_role("button", name="Отключить CRM").click()
        expect(page.locator(".messages")).to_contain_text("CRM отключена")
        expect(badge).to_have_text("не подключена")
        connection = CrmConnection.objects.get(bot=owner_bot)
        assert connection.status == "disconnected" and connection.secret_sealed == ""
