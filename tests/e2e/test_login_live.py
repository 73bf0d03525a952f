"""Signing in through the real login page in Chromium, on the real app (uvicorn): an owner lands
on their bot's dashboard, an operator is sent to the inbox, and a guesser meets the lock.

Refresh docs/screenshots/ with: SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_login_live.py"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from tests.e2e.conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db

PASSWORD = "e2e-login-pass-1"


@pytest.fixture(scope="module")
def accounts(live_app: str, django_db_blocker: DjangoDbBlocker) -> Iterator[dict[str, str]]:
    """An owner and an operator of one bot, committed so that the app process sees them."""
    from axes.models import AccessAttempt

    from bots.models import Bot
    from bots.services import membership_add

    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="Бот для входа", slug="e2e-login", allowed_origins=[live_app])
        owner = membership_add(bot=bot, email="owner@e2e-login.example", role="owner", password=PASSWORD)
        operator = membership_add(bot=bot, email="operator@e2e-login.example", role="operator", password=PASSWORD)
        users = [owner.membership.user, operator.membership.user]
    yield {"owner": users[0].username, "operator": users[1].username}
    with django_db_blocker.unblock():
        AccessAttempt.objects.all().delete()
        bot.delete()
        for user in users:
            user.delete()
        connections.close_all()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("SPRAVKA_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


def sign_in(page: Page, live_app: str, username: str, password: str) -> None:
    page.goto(f"{live_app}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.press("#id_password", "Enter")


def test_an_owner_signs_in_and_lands_on_the_bots_dashboard(page: Page, live_app: str, accounts, shots: Path):
    page.goto(f"{live_app}/accounts/login/")
    expect(page.locator("label[for=id_username]")).to_have_text("Электронная почта:")
    page.screenshot(path=str(shots / "login.png"))
    sign_in(page, live_app, accounts["owner"], PASSWORD)
    expect(page).to_have_url(f"{live_app}/b/e2e-login/")
    expect(page.locator("h1")).to_have_text("Бот для входа")


def test_an_operator_is_sent_to_the_inbox(page: Page, live_app: str, accounts):
    sign_in(page, live_app, accounts["operator"], PASSWORD)
    expect(page).to_have_url(f"{live_app}/inbox/")


def test_a_guesser_meets_the_lock_with_a_clear_message(page: Page, live_app: str, accounts, shots: Path):
    for _ in range(5):
        sign_in(page, live_app, accounts["owner"], "not-the-password")
    expect(page.locator(".errornote").first).to_contain_text("Слишком много неудачных попыток входа")
    page.screenshot(path=str(shots / "login-locked.png"))
    sign_in(page, live_app, accounts["owner"], PASSWORD)  # the right password does not get through a lock
    expect(page).to_have_url(f"{live_app}/accounts/login/")
    expect(page.locator(".errornote").first).to_contain_text("закрыт на 30 мин")
