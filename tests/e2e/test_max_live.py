"""MAX on the owner's channels page, in a real browser against the real app (uvicorn on the test
database), every call to MAX made by messengers/max_bot.py against the local fake MAX Bot API
(tests/fakes/max_api.py): a malformed token and one MAX does not know are explained under the MAX
card's own field and save nothing; the right one shows the bot, the token's last four characters
only, and subscribes the webhook with its secret; the card reads in English too and fits 1024 px;
«Отключить канал» removes the subscription.

Refresh docs/screenshots/ with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_max_live.py"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from bots.models import Bot, Membership
from messengers.models import Connection
from tests.e2e.conftest import owner_page, serving_app
from tests.e2e.test_telegram_live import PASSWORD, PUBLIC_URL, session_of, sign_in
from tests.fakes import FAKE_MAX_TOKEN
from tests.fakes.max_api import FakeMax

pytestmark = pytest.mark.django_db(transaction=True)

CYRILLIC = re.compile(r"[А-Яа-яЁё]")
OWNER = "owner@max-shop.example"


@pytest.fixture(scope="module")
def max_api() -> Iterator[FakeMax]:
    fake = FakeMax().start()
    fake.add_bot(FAKE_MAX_TOKEN)
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def app(django_db_setup: None, django_db_blocker: Any, max_api: FakeMax) -> Iterator[str]:
    """The real app calling the fake MAX Bot API, known to itself by a public https address."""
    with serving_app(django_db_blocker, MAX_API_BASE=max_api.url, SPRAVKA_PUBLIC_URL=PUBLIC_URL) as url:
        yield url


@pytest.fixture
def owner_bot(app: str, max_api: FakeMax, django_user_model: Any) -> Iterator[Bot]:
    max_api.clear()
    bot = Bot.objects.create(name="ТехноДом", slug="e2e-max", site_url="https://tehnodom.example/")
    user = django_user_model.objects.create_user(OWNER, email=OWNER, password=PASSWORD)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    yield bot
    bot.delete()
    user.delete()


def test_the_owner_connects_max_and_disconnects_it(browser: Browser, app: str, owner_bot: Bot, max_api: FakeMax,
                                                   shots: Path, tmp_path: Path):
    path = f"/b/{owner_bot.slug}/channels/"
    with owner_page(browser, app) as page:
        sign_in(page, app, OWNER, path)
        card = page.locator("#max")
        badge = card.locator("h2 .badge")
        expect(badge).to_have_text("не подключён")
        expect(card.locator("ol.howto li")).to_have_count(3)
        expect(card.get_by_role("link", name="MAX для партнёров")).to_have_attribute(
            "href", "https://business.max.ru/self")
        token, errors = card.locator("#id_max-token"), card.locator("#max-errors")

        # Not a token: said under MAX's own field (Telegram's stays clean); MAX is not asked.
        token.fill("не токен")
        card.get_by_role("button", name="Проверить и подключить").click()
        expect(errors).to_contain_text("не похоже на токен MAX")
        expect(page.locator("#token-errors")).to_have_count(0)
        assert max_api.calls == []

        # Well-formed but unknown to MAX (401 verify.token): said so, nothing saved.
        token.fill("UnknownMaxTokenUnknownMaxToken")
        card.get_by_role("button", name="Проверить и подключить").click()
        expect(errors).to_contain_text("MAX не знает этот токен")
        assert [(call.name, call.status) for call in max_api.calls] == [("GET /me", 401)]
        assert not Connection.objects.filter(bot=owner_bot).exists()

        # The right one: checked, subscribed with a secret, the bot shown; the token never again.
        token.fill(FAKE_MAX_TOKEN)
        card.get_by_role("button", name="Проверить и подключить").click()
        expect(page).to_have_url(f"{app}{path}#max")
        expect(page.locator(".messages")).to_contain_text("MAX подключён: бот «spravka_shop_bot»")
        expect(badge).to_have_text("подключён")
        connection = Connection.objects.get(bot=owner_bot, kind=Connection.Kind.MAX)
        assert connection.webhook_url == f"{PUBLIC_URL}/messengers/max/{connection.webhook_key}/"
        assert max_api.subscriptions(FAKE_MAX_TOKEN)[connection.webhook_url]["secret"] == connection.secret
        facts = card.locator("dl.facts")
        expect(facts).to_contain_text("spravka_shop_bot")
        expect(facts.locator("code").first).to_have_text("…" + FAKE_MAX_TOKEN[-4:])
        expect(facts).to_contain_text(connection.webhook_url)
        assert FAKE_MAX_TOKEN not in page.content() and connection.secret not in page.content()
        expect(card.locator("details summary")).to_have_text("Заменить токен")
        page.wait_for_load_state("load")
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "channels-max.png"), full_page=True)
        page.set_viewport_size({"width": 1024, "height": 800})
        assert page.evaluate("document.documentElement.scrollWidth") <= 1024  # the long address wraps
        card.screenshot(path=str(tmp_path / "channels-max-1024.png"))  # to look at, not for the docs

        # In English: the card's own words are English.
        with owner_page(browser, app, locale="en-US") as english:
            english.context.add_cookies([{"name": "sessionid", "value": session_of(page, app), "url": app}])
            english.set_extra_http_headers({"Accept-Language": "en-US,en"})
            english.goto(f"{app}{path}")
            en_card = english.locator("#max")
            expect(en_card.locator("h2 .badge")).to_have_text("connected")
            en_card.locator("details summary").click()
            expect(en_card.locator("label[for=id_max-token]")).to_have_text("MAX bot token")
            words = en_card.inner_text()
            assert not CYRILLIC.search(words), words
            en_card.screenshot(path=str(tmp_path / "channels-max-en.png"))

        # «Отключить канал»: the subscription removed, the token forgotten, the how-to back.
        card.get_by_role("button", name="Отключить канал").click()
        expect(page.locator(".messages")).to_contain_text("MAX отключён")
        expect(badge).to_have_text("не подключён")
        expect(card.locator("ol.howto li")).to_have_count(3)
        assert max_api.subscriptions(FAKE_MAX_TOKEN) == {}
        connection.refresh_from_db()
        assert connection.status == Connection.Status.DISCONNECTED and connection.token_sealed == ""

        # The English page before connecting: the how-to in English too.
        with owner_page(browser, app, locale="en-US") as english:
            english.context.add_cookies([{"name": "sessionid", "value": session_of(page, app), "url": app}])
            english.set_extra_http_headers({"Accept-Language": "en-US,en"})
            english.goto(f"{app}{path}")
            en_card = english.locator("#max")
            expect(en_card.locator("h2 .badge")).to_have_text("not connected")
            words = en_card.inner_text()
            assert not CYRILLIC.search(words), words
            en_card.screenshot(path=str(tmp_path / "channels-max-en-howto.png"))
